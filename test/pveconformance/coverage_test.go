package pveconformance

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/clients/proxmox/surface"
)

// notYetCovered are the surface's endpoints and parameters ("METHOD
// /route" or "METHOD /route param") without a conformance case yet. The
// list only shrinks: a new route or parameter of the client layer needs a
// case, and an entry that gains one must leave the list.
var notYetCovered = map[string]bool{
	// PCI passthrough needs hardware on a real node.
	"POST /nodes/{node}/qemu hostpci[n]":               true,
	"PUT /nodes/{node}/qemu/{vmid}/config hostpci[n]":  true,
	"POST /nodes/{node}/qemu/{vmid}/config hostpci[n]": true,
}

// TestConformanceCoversClientSurface compares what the cases declare
// (covers calls, read from this package's source) with what the client
// layer sends (internal/clients/proxmox/surface), and logs the figures.
func TestConformanceCoversClientSurface(t *testing.T) {
	declared := declaredCoverage(t)
	var endpoints, endpointsCovered, params, paramsCovered int
	for _, e := range surface.Endpoints() {
		endpoints++
		got, ok := declared[e.Key()]
		checkCovered(t, e.Key(), ok)
		if ok {
			endpointsCovered++
		}
		for _, p := range e.Params {
			params++
			checkCovered(t, e.Key()+" "+p, got[p])
			if got[p] {
				paramsCovered++
			}
		}
	}
	for key := range notYetCovered {
		method, route, _ := strings.Cut(key, " ")
		route, param, _ := strings.Cut(route, " ")
		e, ok := surface.Lookup(surface.Key(method, route))
		if !ok || (param != "" && !e.Has(param)) {
			t.Errorf("notYetCovered lists %q, which the client layer does not send: remove it", key)
		}
	}
	t.Logf("conformance coverage of the client layer: %d of %d endpoints, %d of %d parameters", endpointsCovered, endpoints, paramsCovered, params)
}

func checkCovered(t *testing.T, key string, covered bool) {
	t.Helper()
	switch {
	case !covered && !notYetCovered[key]:
		t.Errorf("the client layer sends %s, which no conformance case covers: add a case with covers(...) (or, for now, list it in notYetCovered)", key)
	case covered && notYetCovered[key]:
		t.Errorf("%s is covered now: remove it from notYetCovered", key)
	}
}

// declaredCoverage reads every covers(c, "...") call of the package's
// tests: endpoint key -> parameters declared.
func declaredCoverage(t *testing.T) map[string]map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "covers" || len(call.Args) < 2 {
				return true
			}
			for _, a := range call.Args[1:] {
				d, ok := stringConstant(a)
				if !ok {
					t.Errorf("%s: covers takes string literals (or their concatenation) only", fset.Position(a.Pos()))
					continue
				}
				key, params := parseDecl(d)
				if out[key] == nil {
					out[key] = map[string]bool{}
				}
				for _, p := range params {
					out[key][p] = true
				}
			}
			return true
		})
	}
	return out
}

// stringConstant evaluates a string literal or a concatenation of them.
func stringConstant(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		a, ok1 := stringConstant(e.X)
		b, ok2 := stringConstant(e.Y)
		return a + b, ok1 && ok2
	}
	return "", false
}
