// Package surface lists the Proxmox VE API requests the client layer
// (internal/clients/proxmox) sends: each endpoint as its method and route
// template (proxmox.RouteTemplate's form) with the parameters the client
// may send to it. It is test support, kept honest from both sides:
//
//   - internal/clients/proxmox's simulator-backed tests fail when the client
//     sends a request or a parameter missing here (a new route added to the
//     client must be added here);
//   - test/pveconformance's TestConformanceCoversClientSurface fails when an
//     endpoint or parameter here has no conformance case.
//
// Production code does not import it.
package surface

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// An Endpoint is one method on one route template, with the parameter names
// the client layer may send (query string or body), indexed ones written as
// PVE's schema writes them (net[n]).
type Endpoint struct {
	Method string
	Route  string
	Params []string
}

// Key is "METHOD /route", how cases and recorders name an endpoint.
func (e Endpoint) Key() string { return Key(e.Method, e.Route) }

// Key joins a method and a route template.
func Key(method, route string) string { return method + " " + route }

// Endpoints returns the client layer's surface, sorted by key.
func Endpoints() []Endpoint {
	out := make([]Endpoint, len(endpoints))
	copy(out, endpoints)
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// Lookup returns the endpoint with key, if the surface has it.
func Lookup(key string) (Endpoint, bool) {
	for _, e := range endpoints {
		if e.Key() == key {
			return e, true
		}
	}
	return Endpoint{}, false
}

// Has reports whether the endpoint with key declares param.
func (e Endpoint) Has(param string) bool {
	for _, p := range e.Params {
		if p == param {
			return true
		}
	}
	return false
}

// indexed matches a parameter ending in an index (scsi0, net12, ipconfig0).
var indexed = regexp.MustCompile(`^([a-z_-]*[a-z_-])\d+$`)

// ParamName writes an indexed parameter as PVE's schema does: scsi0 is
// scsi[n]; others are unchanged.
func ParamName(name string) string {
	if m := indexed.FindStringSubmatch(name); m != nil {
		return m[1] + "[n]"
	}
	return name
}

// Params returns the parameter names a request carries, in its query string
// and its body (JSON object or form), as ParamName writes them, sorted and
// without duplicates. The body is read and put back for the transport.
func Params(req *http.Request) ([]string, error) {
	names := map[string]bool{}
	for k := range req.URL.Query() {
		names[ParamName(k)] = true
	}
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if err := bodyParams(req.Header.Get("Content-Type"), body, names); err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func bodyParams(contentType string, body []byte, names map[string]bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/x-www-form-urlencoded" {
		v, err := url.ParseQuery(string(body))
		if err != nil {
			return err
		}
		for k := range v {
			names[ParamName(k)] = true
		}
		return nil
	}
	if strings.HasPrefix(mt, "multipart/") {
		return nil // uploads: the client layer sends none
	}
	// A body that is not an object (null) leaves obj empty: no parameters.
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(body, &obj)
	for k := range obj {
		names[ParamName(k)] = true
	}
	return nil
}
