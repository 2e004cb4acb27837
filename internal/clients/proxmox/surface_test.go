package proxmox

import (
	"testing"

	"github.com/kubemox/provider-proxmox/internal/clients/proxmox/surface"
)

// transportProbes are requests the transport tests send through c.API()
// to exercise retries, sessions and quiet logging; the provider does not.
var transportProbes = map[string]bool{"GET /pools": true, "POST /pools": true, "GET /nodes/{node}/status": true}

// undeclared returns what of one request the surface list does not declare:
// its endpoint, or those of its parameters missing there.
func undeclared(method, route string, params []string, err error) []string {
	key := surface.Key(method, route)
	if transportProbes[key] {
		return nil
	}
	if err != nil {
		return []string{key + ": parameters unreadable: " + err.Error()}
	}
	e, ok := surface.Lookup(key)
	var out []string
	if !ok {
		out = append(out, key+" (endpoint)")
	}
	for _, p := range params {
		if !e.Has(p) {
			out = append(out, key+" "+p)
		}
	}
	return out
}

// checkSurface fails the test when its client sent a request or parameter
// the surface list (internal/clients/proxmox/surface) does not declare: the
// conformance suite's coverage test works from that list, so a route the
// client starts using must be declared there and get a conformance case.
func (w *wire) checkSurface(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	for _, u := range w.undeclared {
		if !seen[u] {
			seen[u] = true
			t.Errorf("the client sent %s, missing from internal/clients/proxmox/surface: declare it and add a conformance case in test/pveconformance", u)
		}
	}
}
