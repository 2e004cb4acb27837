package pvesim

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// One API call as a handler sees it: who made it and its parameters, decoded from the query
// and a form or JSON body as pve-http-server does.

// credential identifies who made an authenticated request.
type credential struct {
	// User is "user@realm".
	User string
	// TokenID is the full token id "user@realm!name" for token requests.
	TokenID string
	// Fingerprint is sha256(secret)[:8] of the token secret or of the password behind a ticket.
	Fingerprint string
}

// name is how counters and task UPIDs name the credential.
func (c credential) name() string {
	if c.TokenID != "" {
		return c.TokenID
	}
	return c.User
}

// request is one validated API call.
type request struct {
	method   string
	template string
	params   map[string]string
	cred     credential
	http     *http.Request
	// taskFault, when set, makes tasks started by this request fail with this text.
	taskFault string
	// restartsProxy is set by a handler that restarted pveproxy.
	restartsProxy bool
}

func (r *request) str(name string) string { return r.params[name] }

func (r *request) has(name string) bool { _, ok := r.params[name]; return ok }

func (r *request) int(name string) int {
	v, _ := strconv.Atoi(r.params[name])
	return v
}

func (r *request) bool(name string) bool { return r.params[name] == "1" }

func (r *request) node() string { return r.params["node"] }

func (r *request) vmid() int { return r.int("vmid") }

// maxBodySize bounds request bodies; PVE's own limit is far lower for most calls.
const maxBodySize = 4 << 20

// decodeParams merges query parameters and a form or JSON body into one string map, as
// pve-http-server does. JSON booleans become 1/0 and numbers keep their literal text.
func decodeParams(contentType, rawQuery string, body []byte) (map[string]string, error) {
	out := map[string]string{}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, errf(http.StatusBadRequest, "unable to parse query string")
	}
	for k, v := range q {
		out[k] = strings.Join(v, "\x00")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return out, nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/json" {
		return decodeJSONBody(body, out)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, errf(http.StatusBadRequest, "unable to parse form body")
	}
	for k, v := range form {
		out[k] = strings.Join(v, "\x00")
	}
	return out, nil
}

func decodeJSONBody(body []byte, out map[string]string) (map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, errf(http.StatusBadRequest, "unable to parse JSON body - %s", err.Error())
	}
	errs := map[string]string{}
	for k, v := range m {
		switch t := v.(type) {
		case nil:
			continue
		case string:
			out[k] = t
		case json.Number:
			out[k] = t.String()
		case bool:
			out[k] = strconv.Itoa(boolNum(t))
		case []any:
			errs[k] = "type check ('string') failed - got ARRAY"
		default:
			errs[k] = "type check ('string') failed - got HASH"
		}
	}
	if len(errs) > 0 {
		return nil, errParams(errs)
	}
	return out, nil
}

func readBody(r *http.Request) ([]byte, error) {
	// Most calls are GETs without a body; io.ReadAll would still allocate its buffer.
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodySize+1))
	if err != nil {
		return nil, errf(http.StatusBadRequest, "unable to read request body")
	}
	if len(b) > maxBodySize {
		return nil, errf(http.StatusRequestEntityTooLarge, "request entity too large")
	}
	return b, nil
}
