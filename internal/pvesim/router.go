package pvesim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// handlerFunc serves one route. It runs with the server's state lock held and returns
// the value for "data" or an error (an *apiError for PVE-formatted failures).
type handlerFunc func(s *Server, r *request) (any, error)

// route is one row of the route table (routes.go).
type route struct {
	spec    RouteSpec
	handler handlerFunc
	// unlocked handlers take the state lock themselves (or need none).
	unlocked bool
	// endpoint is the counters' key, "GET /nodes/{node}/qemu/{vmid}/config".
	endpoint string
	// params is spec.Params compiled for validation.
	params *paramSet
}

// trieNode matches path templates segment by segment: literal children first, then one
// parameter child, then a parameter that takes the rest of the path ({name+}).
type trieNode struct {
	literal map[string]*trieNode
	param   *trieNode
	pname   string
	rest    *trieNode
	rname   string
	routes  map[string]*route
}

func newTrieNode() *trieNode {
	return &trieNode{literal: map[string]*trieNode{}, routes: map[string]*route{}}
}

type router struct {
	root   *trieNode
	routes []*route
}

// newRouter indexes the routes of a route table by path.
func newRouter(table []route) *router {
	rt := &router{root: newTrieNode()}
	for i := range table {
		rt.add(&table[i])
	}
	return rt
}

func (rt *router) add(r *route) {
	r.endpoint = r.spec.Method + " " + r.spec.Path
	r.params = compileParams(r.spec.Params)
	n := rt.root
	for _, seg := range splitPath(r.spec.Path) {
		n = n.child(seg)
	}
	if _, dup := n.routes[r.spec.Method]; dup {
		panic(fmt.Sprintf("pvesim: duplicate route %s %s", r.spec.Method, r.spec.Path)) // programming error at init
	}
	n.routes[r.spec.Method] = r
	rt.routes = append(rt.routes, r)
}

func (n *trieNode) child(seg string) *trieNode {
	if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "+}") {
		if n.rest == nil {
			n.rest = newTrieNode()
			n.rname = seg[1 : len(seg)-2]
		}
		return n.rest
	}
	if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
		if n.param == nil {
			n.param = newTrieNode()
			n.pname = seg[1 : len(seg)-1]
		}
		return n.param
	}
	c, ok := n.literal[seg]
	if !ok {
		c = newTrieNode()
		n.literal[seg] = c
	}
	return c
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// match finds the node for a concrete path, filling vars. Segments are already unescaped.
func (rt *router) match(segs []string) (*trieNode, map[string]string) {
	vars := map[string]string{}
	n := matchFrom(rt.root, segs, vars)
	return n, vars
}

func matchFrom(n *trieNode, segs []string, vars map[string]string) *trieNode {
	if len(segs) == 0 {
		if len(n.routes) > 0 {
			return n
		}
		return nil
	}
	if c, ok := n.literal[segs[0]]; ok {
		if found := matchFrom(c, segs[1:], vars); found != nil {
			return found
		}
	}
	if n.param != nil {
		if found := matchFrom(n.param, segs[1:], vars); found != nil {
			vars[n.pname] = segs[0]
			return found
		}
	}
	if n.rest != nil && len(n.rest.routes) > 0 {
		vars[n.rname] = strings.Join(segs, "/")
		return n.rest
	}
	return nil
}

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

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
