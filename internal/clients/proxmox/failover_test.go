package proxmox

import (
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// pveNode is a fake pveproxy: it answers /access/ticket with a ticket valid
// on every node (tickets are signed by the cluster's key), GET /version with
// 200 when the ticket or token is good, and every other path with status.
type pveNode struct {
	mu      sync.Mutex
	counts  map[string]int
	status  int           // answer of paths other than /version and the login
	delay   time.Duration // before answering anything
	logins  *atomic.Int32 // shared by the nodes of one cluster
	tickets bool          // check the PVEAuthCookie
}

func (n *pveNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	if n.counts == nil {
		n.counts = map[string]int{}
	}
	n.counts[r.Method+" "+r.URL.Path]++
	n.mu.Unlock()
	time.Sleep(n.delay)
	switch {
	case r.URL.Path == "/api2/json/access/ticket":
		n.logins.Add(1)
		writeJSON(w, http.StatusOK, `{"data":{"ticket":"PVE:root@pam:CLUSTERWIDE","CSRFPreventionToken":"csrf","username":"root@pam"}}`)
	case n.tickets && r.Header.Get("Cookie") != "PVEAuthCookie=PVE:root@pam:CLUSTERWIDE":
		writeJSON(w, http.StatusUnauthorized, `{"data":null}`)
	case r.URL.Path == "/api2/json/version":
		writeJSON(w, http.StatusOK, `{"data":{"version":"9.1.2","release":"9.1","repoid":"abc"}}`)
	case n.status != 0:
		writeJSON(w, n.status, `{"data":null,"message":"injected\n"}`)
	default:
		writeJSON(w, http.StatusOK, `{"data":null}`)
	}
}

func (n *pveNode) count(key string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.counts[key]
}

// restartable is an HTTPS server that can be stopped (connections refused)
// and started again on the same address, like a node's pveproxy.
type restartable struct {
	t    *testing.T
	addr string
	h    http.Handler
	srv  *httptest.Server
}

func newRestartable(t *testing.T, h http.Handler) *restartable {
	t.Helper()
	r := &restartable{t: t, h: h, addr: "127.0.0.1:0"}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *restartable) start() {
	r.t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("listen %s: %v", r.addr, err)
	}
	r.addr = ln.Addr().String()
	r.srv = httptest.NewUnstartedServer(r.h)
	r.srv.Listener = ln
	r.srv.StartTLS()
}

func (r *restartable) stop() {
	if r.srv != nil {
		r.srv.Close()
		r.srv = nil
	}
}

func (r *restartable) url() string { return "https://" + r.addr }

// clusterClient builds a client for nodes, the first one its endpoint. All
// httptest servers share one certificate, so the first one's CA does.
func clusterClient(t *testing.T, password bool, mod func(*Config), nodes ...*restartable) *Client {
	t.Helper()
	cfg := Config{Endpoint: nodes[0].url(), CAPEM: caOf(nodes[0].srv), ProbeInterval: 50 * time.Millisecond}
	for _, n := range nodes[1:] {
		cfg.Endpoints = append(cfg.Endpoints, n.url())
	}
	if password {
		cfg.Username, cfg.Password = "root@pam", "pw-canary"
	} else {
		cfg.TokenID, cfg.Secret = "root@pam!test", "s3cret-token"
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	c.fastRetries()
	t.Cleanup(c.Retire)
	return c
}

func caOf(srv *httptest.Server) []byte {
	_, ca := pemOf(srv)
	return ca
}

func healthOf(c *Client) string {
	var b strings.Builder
	for _, e := range c.Endpoints() {
		state := "down"
		if e.Healthy {
			state = "healthy"
		}
		if e.Active {
			state += "*"
		}
		b.WriteString(state + " ")
	}
	return strings.TrimSpace(b.String())
}

func TestFailoverOnConnectionRefused(t *testing.T) {
	logins := &atomic.Int32{}
	a, b := &pveNode{logins: logins}, &pveNode{logins: logins}
	na, nb := newRestartable(t, a), newRestartable(t, b)
	c := clusterClient(t, false, nil, na, nb)
	ctx := t.Context()
	if _, err := c.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got := healthOf(c); got != "healthy* healthy" {
		t.Fatalf("health = %q", got)
	}
	na.stop()
	// A node that goes down drops its connections; the client's idle one
	// to it is gone too, so the next request dials.
	c.base.CloseIdleConnections()
	// A write that never left the client (refused at dial) goes to the next
	// endpoint at once.
	if err := c.API().Post(ctx, "/nodes/pve/qemu", map[string]any{"vmid": 100}, nil); err != nil {
		t.Fatalf("POST with the first endpoint refusing: %v", err)
	}
	if got := b.count("POST /api2/json/nodes/pve/qemu"); got != 1 {
		t.Errorf("second endpoint got %d POSTs, want 1", got)
	}
	if got := healthOf(c); got != "down healthy*" {
		t.Errorf("health = %q, want the first down and the second active", got)
	}
	if msg := c.Endpoints()[0].Message; !strings.Contains(msg, "refused") {
		t.Errorf("down message = %q, want the transport error", msg)
	}
	// While it is down, requests go straight to the second endpoint.
	before := a.count("GET /api2/json/version")
	if _, err := c.Verify(ctx); err != nil {
		t.Fatalf("Verify on the second endpoint: %v", err)
	}
	if got := a.count("GET /api2/json/version"); got != before {
		t.Errorf("the down endpoint got a request")
	}
}

// A write on a kept-alive connection the server closed may have reached it:
// it is not sent again, but the endpoint is down for the next request.
func TestWriteOnDroppedConnectionIsNotReplayed(t *testing.T) {
	logins := &atomic.Int32{}
	a, b := &pveNode{logins: logins}, &pveNode{logins: logins}
	na, nb := newRestartable(t, a), newRestartable(t, b)
	c := clusterClient(t, false, func(cfg *Config) { cfg.ProbeInterval = time.Hour }, na, nb)
	ctx := t.Context()
	if _, err := c.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	na.stop()
	err := c.API().Post(ctx, "/nodes/pve/qemu", map[string]any{"vmid": 100}, nil)
	if err == nil {
		// The transport noticed the closed connection before writing and
		// dialled: refused, so it went to the second endpoint.
		if got := b.count("POST /api2/json/nodes/pve/qemu"); got != 1 {
			t.Fatalf("POST succeeded but the second endpoint got %d", got)
		}
	} else if got := b.count("POST /api2/json/nodes/pve/qemu"); got != 0 {
		t.Fatalf("POST failed (%v) and was also sent to the second endpoint", err)
	}
	if got := healthOf(c); !strings.HasPrefix(got, "down") {
		t.Fatalf("health = %q, want the first endpoint down", got)
	}
	if err := c.API().Post(ctx, "/nodes/pve/qemu", map[string]any{"vmid": 101}, nil); err != nil {
		t.Fatalf("the next POST: %v", err)
	}
}

func TestNoFailoverOnHTTPAnswers(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 500, 501, 502, 503, 595, 596} {
		logins := &atomic.Int32{}
		a, b := &pveNode{logins: logins, status: status}, &pveNode{logins: logins}
		c := clusterClient(t, false, nil, newRestartable(t, a), newRestartable(t, b))
		// 595 here is pveproxy saying node pve2 is unreachable: any endpoint
		// would say the same, so it is reported, not failed over.
		_ = c.API().Get(t.Context(), "/nodes/pve2/qemu/100/status/current", nil)
		_ = c.API().Post(t.Context(), "/nodes/pve2/qemu/100/status/start", nil, nil)
		if got := b.count("GET /api2/json/nodes/pve2/qemu/100/status/current") + b.count("POST /api2/json/nodes/pve2/qemu/100/status/start"); got != 0 {
			t.Errorf("%d: the second endpoint got %d requests, want 0 (an HTTP answer is no failover)", status, got)
		}
		if got := healthOf(c); got != "healthy* healthy" {
			t.Errorf("%d: health = %q, want the first still healthy and active", status, got)
		}
	}
}

func TestFailoverOnTimeoutReplaysOnlyGET(t *testing.T) {
	logins := &atomic.Int32{}
	a, b := &pveNode{logins: logins, delay: time.Second}, &pveNode{logins: logins}
	na, nb := newRestartable(t, a), newRestartable(t, b)
	c := clusterClient(t, false, func(cfg *Config) { cfg.Timeout = 100 * time.Millisecond; cfg.ProbeInterval = time.Hour }, na, nb)
	ctx := t.Context()
	if err := c.API().Post(ctx, "/nodes/pve/qemu", map[string]any{"vmid": 100}, nil); err == nil {
		t.Fatal("a POST that timed out succeeded")
	}
	if got := b.count("POST /api2/json/nodes/pve/qemu"); got != 0 {
		t.Errorf("a POST that may have reached the first endpoint was sent again to the second (%d)", got)
	}
	if got := healthOf(c); got != "down healthy" && got != "down* healthy" {
		t.Errorf("health after the timeout = %q, want the first down", got)
	}
	if _, err := c.Verify(ctx); err != nil {
		t.Fatalf("GET after the timeout: %v", err)
	}
	if got := b.count("GET /api2/json/version"); got != 1 {
		t.Errorf("second endpoint got %d GET /version, want 1", got)
	}
}

func TestFailoverOnTLSFailure(t *testing.T) {
	logins := &atomic.Int32{}
	plain := httptest.NewServer(&pveNode{logins: logins}) // speaks no TLS
	t.Cleanup(plain.Close)
	b := &pveNode{logins: logins}
	nb := newRestartable(t, b)
	cfg := Config{Endpoint: "https://" + plain.Listener.Addr().String(), Endpoints: []string{nb.url()},
		CAPEM: caOf(nb.srv), TokenID: "root@pam!test", Secret: "s", ProbeInterval: time.Hour}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Retire)
	if _, err := c.Verify(t.Context()); err != nil {
		t.Fatalf("Verify with a TLS failure on the first endpoint: %v", err)
	}
	if got := healthOf(c); got != "down healthy*" {
		t.Errorf("health = %q", got)
	}
}

func TestOneLoginAcrossEndpoints(t *testing.T) {
	logins := &atomic.Int32{}
	a, b := &pveNode{logins: logins, tickets: true}, &pveNode{logins: logins, tickets: true}
	na, nb := newRestartable(t, a), newRestartable(t, b)
	c := clusterClient(t, true, func(cfg *Config) { cfg.ProbeInterval = time.Hour }, na, nb)
	ctx := t.Context()
	if _, err := c.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	na.stop()
	for range 3 {
		if _, err := c.Verify(ctx); err != nil {
			t.Fatalf("Verify after failover: %v", err)
		}
	}
	if got := logins.Load(); got != 1 {
		t.Errorf("logins = %d, want 1: the ticket is valid on every node", got)
	}
	if got := b.count("GET /api2/json/version"); got != 3 {
		t.Errorf("second endpoint served %d GET /version with the shared ticket, want 3", got)
	}
}

func TestProbeBringsEndpointBack(t *testing.T) {
	logins := &atomic.Int32{}
	a, b := &pveNode{logins: logins}, &pveNode{logins: logins}
	na, nb := newRestartable(t, a), newRestartable(t, b)
	changes := &atomic.Int32{}
	c := clusterClient(t, false, func(cfg *Config) { cfg.OnEndpointChange = func() { changes.Add(1) } }, na, nb)
	ctx := t.Context()
	na.stop()
	if _, err := c.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got := healthOf(c); got != "down healthy*" {
		t.Fatalf("health = %q", got)
	}
	na.start()
	deadline := time.Now().Add(10 * time.Second)
	for !c.Endpoints()[0].Healthy {
		if time.Now().After(deadline) {
			t.Fatalf("the first endpoint is not healthy again after it came back: %+v", c.Endpoints())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := a.count("GET /api2/json/version"); got < 1 {
		t.Errorf("no probe (GET /version) reached the endpoint that came back")
	}
	// Requests prefer the first endpoint again.
	before := b.count("GET /api2/json/version")
	if _, err := c.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.count("GET /api2/json/version"); got != before {
		t.Errorf("a request went to the second endpoint after the first came back")
	}
	if got := healthOf(c); got != "healthy* healthy" {
		t.Errorf("health = %q", got)
	}
	if changes.Load() < 3 {
		t.Errorf("OnEndpointChange called %d times, want at least 3 (down, switch, back, switch back)", changes.Load())
	}
}

func TestRetireStopsProbes(t *testing.T) {
	logins := &atomic.Int32{}
	a, b := &pveNode{logins: logins}, &pveNode{logins: logins}
	na, nb := newRestartable(t, a), newRestartable(t, b)
	c := clusterClient(t, false, nil, na, nb)
	na.stop()
	if _, err := c.Verify(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(120 * time.Millisecond) // a probe or two fails
	c.Retire()
	done := make(chan struct{})
	go func() { c.probes.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("probe goroutines still running 5s after Retire")
	}
	if c.Endpoints()[0].Healthy {
		t.Error("the down endpoint became healthy without answering")
	}
}

func TestNormalizeEndpoints(t *testing.T) {
	got, err := NormalizeEndpoints("pve1", []string{"pve2:8006", "https://pve1:8006/api2/json", "[fd00::1]"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://pve1:8006/api2/json", "https://pve2:8006/api2/json", "https://[fd00::1]:8006/api2/json"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := NormalizeEndpoints("pve1", []string{"http://pve2"}); err == nil || !strings.Contains(err.Error(), "endpoints[0]") {
		t.Errorf("an http endpoint in endpoints: err = %v, want one naming endpoints[0]", err)
	}
}

func pemOf(srv *httptest.Server) (string, []byte) {
	return srv.URL, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// Against the simulated cluster on two listeners: one login for both, a
// listener going down fails over, a node going offline (pveproxy's 595 for
// its paths) does not, and the listener coming back is found by a probe.
func TestSimClusterFailover(t *testing.T) {
	srv := startSim(t, pvesim.Options{Nodes: []string{"pve", "pve2"}, ExtraListen: []string{"127.0.0.1:0"}})
	urls := srv.URLs()
	c, w := simClient(t, srv, func(cfg *Config) {
		cfg.Endpoint, cfg.Endpoints, cfg.ProbeInterval = urls[0], []string{urls[1]}, 50*time.Millisecond
	})
	c.fastRetries()
	ctx := t.Context()
	if _, err := c.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := srv.ListenerDown(0); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Verify(ctx); err != nil {
			t.Fatalf("Verify with the first listener down: %v", err)
		}
	}
	if got := healthOf(c); got != "down healthy*" {
		t.Fatalf("health = %q", got)
	}
	if got := w.count("POST /access/ticket"); got != 1 {
		t.Errorf("logins = %d, want 1: the ticket is valid on every node", got)
	}

	if err := srv.SetNodeOffline("pve2", true, ""); err != nil {
		t.Fatal(err)
	}
	err := c.API().Get(ctx, "/nodes/pve2/status", nil)
	if apiErr, ok := proxmox.AsAPIError(err); !ok || apiErr.StatusCode != 595 {
		t.Fatalf("GET for an offline node: %v, want pveproxy's 595", err)
	}
	if got := healthOf(c); got != "down healthy*" {
		t.Errorf("health after a 595 = %q: a node being unreachable is no endpoint failure", got)
	}

	if err := srv.ListenerUp(0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !c.Endpoints()[0].Healthy {
		if time.Now().After(deadline) {
			t.Fatalf("the first listener is not healthy after it came back: %+v", c.Endpoints())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	if got := healthOf(c); got != "healthy* healthy" {
		t.Errorf("health after the first came back = %q", got)
	}
	if got := w.count("POST /access/ticket"); got != 1 {
		t.Errorf("logins = %d after failing over and back, want 1", got)
	}
}
