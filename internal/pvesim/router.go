package pvesim

import (
	"fmt"
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

// router is a path trie rather than net/http's ServeMux because the route must be known
// before authentication (NoAuth and NoToken are per route) and a path no route serves is
// answered with PVE's 501 "Method ... not implemented" only after authentication, where
// ServeMux answers 404/405 and redirects unclean paths itself.
type router struct {
	root *trieNode
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
