package proxmox

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/clients/proxmox/surface"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	simUser     = "root@pam"
	simPassword = "pw-Very-Secret-1"
	simTokenID  = "root@pam!kubemox"
	simSecret   = "tok-Very-Secret-1"
)

func startSim(t *testing.T, opts pvesim.Options) *pvesim.Server {
	t.Helper()
	srv, err := pvesim.Start(opts)
	if err != nil {
		t.Fatalf("pvesim.Start: %v", err)
	}
	t.Cleanup(srv.Close)
	srv.AddUser(simUser, simPassword)
	srv.AddToken(simTokenID, simSecret)
	return srv
}

// wire observes every request that leaves a client: how many per
// "METHOD /path", how many 401 answers, and the most in flight at once.
type wire struct {
	next         http.RoundTripper
	mu           sync.Mutex
	byEndpoint   map[string]int
	undeclared   []string
	unauthorized int
	cur, maxCur  atomic.Int32
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	n := w.cur.Add(1)
	for m := w.maxCur.Load(); n > m && !w.maxCur.CompareAndSwap(m, n); m = w.maxCur.Load() {
	}
	defer w.cur.Add(-1)
	params, err := surface.Params(req)
	w.mu.Lock()
	w.byEndpoint[req.Method+" "+strings.TrimPrefix(req.URL.Path, "/api2/json")]++
	w.undeclared = append(w.undeclared, undeclared(req.Method, RouteTemplate(req.URL.EscapedPath()), params, err)...)
	w.mu.Unlock()
	resp, err := w.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		w.mu.Lock()
		w.unauthorized++
		w.mu.Unlock()
	}
	return resp, err
}

func (w *wire) count(endpoint string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byEndpoint[endpoint]
}

func (w *wire) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, v := range w.byEndpoint {
		n += v
	}
	return n
}

func (w *wire) unauthorizedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unauthorized
}

// simClient builds a client for srv (password auth unless mod changes it)
// and returns it with its wire observer.
func simClient(t *testing.T, srv *pvesim.Server, mod func(*Config)) (*Client, *wire) {
	t.Helper()
	cfg := Config{Endpoint: srv.APIURL(), Username: simUser, Password: simPassword, CAPEM: srv.CAPEM()}
	if mod != nil {
		mod(&cfg)
	}
	w := &wire{byEndpoint: map[string]int{}}
	c, err := newClient(cfg, func(rt http.RoundTripper) http.RoundTripper { w.next = rt; return w })
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Retire)
	t.Cleanup(func() { w.checkSurface(t) })
	return c, w
}

func useToken(cfg *Config) {
	cfg.Username, cfg.Password, cfg.TokenID, cfg.Secret = "", "", simTokenID, simSecret
}
