package proxmox

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func TestSimVerify(t *testing.T) {
	srv := startSim(t, pvesim.Options{AuthFailDelay: 3 * time.Second})
	for name, mod := range map[string]func(*Config){"password": nil, "token": useToken} {
		c, w := simClient(t, srv, mod)
		v, err := c.Verify(t.Context())
		if err != nil {
			t.Fatalf("%s: Verify: %v", name, err)
		}
		if !strings.HasPrefix(v, "9.") {
			t.Fatalf("%s: version %q", name, v)
		}
		// Logging in up front means no request ever pays pveproxy's 401 delay.
		if got := w.unauthorizedCount(); got != 0 {
			t.Fatalf("%s: %d answers were 401", name, got)
		}
	}
	c := srv.Counters()
	if c.ByCredential[simUser] == 0 || c.ByCredential[simTokenID] == 0 {
		t.Fatalf("simulator did not see both credentials: %v", c.ByCredential)
	}
}

func TestSimVerifyFailures(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	_ = closed.Close()

	cases := map[string]struct {
		mod  func(*Config)
		want FailureReason
	}{
		"wrong password": {func(c *Config) { c.Password = "wrong-Password-9" }, AuthenticationFailed},
		"unknown user":   {func(c *Config) { c.Username = "nobody@pve" }, AuthenticationFailed},
		"wrong secret":   {func(c *Config) { useToken(c); c.Secret = "wrong-Secret-9" }, AuthenticationFailed},
		"unknown token":  {func(c *Config) { useToken(c); c.TokenID = "root@pam!other" }, AuthenticationFailed},
		"unknown CA":     {func(c *Config) { c.CAPEM = nil }, TLSVerificationFailed},
		"unknown CA tok": {func(c *Config) { useToken(c); c.CAPEM = nil }, TLSVerificationFailed},
		"wrong host name": {func(c *Config) {
			// The certificate names 127.0.0.1, localhost and ::1 only.
			other := startSim(t, pvesim.Options{Listen: "127.0.0.2:0"})
			c.Endpoint, c.CAPEM = other.APIURL(), other.CAPEM()
		}, TLSVerificationFailed},
		"closed port": {func(c *Config) { c.Endpoint = closedAddr }, EndpointUnreachable},
	}
	for name, tc := range cases {
		c, _ := simClient(t, srv, tc.mod)
		c.fastRetries()
		_, err := c.Verify(t.Context())
		if got := Classify(err); got != tc.want {
			t.Errorf("%s: Classify(%v) = %q, want %q", name, err, got, tc.want)
		}
		for _, secret := range []string{simPassword, simSecret, "wrong-Password-9", "wrong-Secret-9"} {
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("%s: error leaks a secret: %v", name, err)
			}
		}
	}
	for name, mod := range map[string]func(*Config){
		"CA bundle": nil,
		"insecure":  func(c *Config) { c.CAPEM, c.InsecureSkipVerify = nil, true },
	} {
		c, _ := simClient(t, srv, mod)
		if _, err := c.Verify(t.Context()); err != nil {
			t.Errorf("%s: Verify: %v", name, err)
		}
	}
}

func TestSimRetire(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	for name, mod := range map[string]func(*Config){"password": nil, "token": useToken} {
		c, w := simClient(t, srv, mod)
		if _, err := c.Verify(t.Context()); err != nil {
			t.Fatalf("%s: Verify: %v", name, err)
		}
		if _, err := c.CachedClusterResources(t.Context(), time.Hour); err != nil {
			t.Fatalf("%s: CachedClusterResources: %v", name, err)
		}
		before, simBefore := w.total(), sumCounts(srv.Counters().ByEndpoint)
		c.Retire()
		calls := map[string]error{
			"Verify": func() error { _, err := c.Verify(t.Context()); return err }(),
			"ClusterResources": func() error {
				_, err := c.ClusterResources(t.Context())
				return err
			}(),
			"CachedClusterResources": func() error {
				_, err := c.CachedClusterResources(t.Context(), time.Hour) // fresh rows are cached
				return err
			}(),
			"POST": c.API().Post(t.Context(), "/pools", map[string]string{"poolid": "p"}, nil),
			"GET":  c.API().Get(t.Context(), "/nodes", nil),
		}
		for call, err := range calls {
			if !errors.Is(err, ErrClientRetired) {
				t.Errorf("%s: %s after Retire: %v, want ErrClientRetired", name, call, err)
			}
		}
		if got := w.total(); got != before {
			t.Errorf("%s: %d requests left the client after Retire", name, got-before)
		}
		if got := sumCounts(srv.Counters().ByEndpoint); got != simBefore {
			t.Errorf("%s: simulator counted %d requests after Retire", name, got-simBefore)
		}
	}
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestSimCacheRotation replaces a connection's client after a token rotation:
// the old client is retired, a subscriber hears of it, and the simulator sees
// only the new secret afterwards.
func TestSimCacheRotation(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	cache := NewCache()
	events := cache.Subscribe()

	if _, err := cache.Get("lab"); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), `"lab"`) {
		t.Fatalf("Get before Store: %v, want ErrNotReady naming the connection", err)
	}
	old, _ := simClient(t, srv, useToken)
	cache.Store("lab", "gen1/rv1", old)
	expectEvent(t, events, "lab")
	if got, err := cache.Get("lab"); err != nil || got != old {
		t.Fatalf("Get = %p, %v; want the stored client", got, err)
	}

	const rotated = "tok-Rotated-2"
	srv.AddToken(simTokenID, rotated)
	fresh, _ := simClient(t, srv, func(c *Config) { useToken(c); c.Secret = rotated })
	cache.Store("lab", "gen1/rv2", fresh)
	expectEvent(t, events, "lab")
	if cache.Fingerprint("lab") != "gen1/rv2" {
		t.Fatalf("Fingerprint = %q", cache.Fingerprint("lab"))
	}
	if !old.Retired() {
		t.Fatal("the replaced client was not retired")
	}
	srv.ResetCounters()
	cl, err := cache.Get("lab")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Verify(t.Context()); err != nil {
		t.Fatalf("Verify with the rotated secret: %v", err)
	}
	if _, err := old.Verify(t.Context()); !errors.Is(err, ErrClientRetired) {
		t.Fatalf("old client after rotation: %v, want ErrClientRetired", err)
	}
	bySecret := srv.Counters().ByCredentialSecret
	if bySecret[pvesim.CredentialFingerprint(simSecret)] != 0 || bySecret[pvesim.CredentialFingerprint(rotated)] == 0 {
		t.Fatalf("requests by secret after rotation: %v", bySecret)
	}

	cache.Store("lab", "gen1/rv2", fresh) // same fingerprint: nothing to tell
	select {
	case ev := <-events:
		t.Fatalf("unexpected event for an unchanged fingerprint: %v", ev.Object.GetName())
	default:
	}
	cache.Remove("lab")
	expectEvent(t, events, "lab")
	if !fresh.Retired() {
		t.Fatal("Remove did not retire the client")
	}
	if _, err := cache.Get("lab"); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Get after Remove: %v", err)
	}
}

func expectEvent(t *testing.T, events <-chan event.GenericEvent, name string) {
	t.Helper()
	select {
	case ev := <-events:
		pc, ok := ev.Object.(*v1alpha1.ProxmoxConnection)
		if !ok || pc.Name != name || pc.GroupVersionKind() != v1alpha1.ProxmoxConnectionGroupVersionKind {
			t.Fatalf("event object %#v, want ProxmoxConnection %q", ev.Object, name)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no event for %q", name)
	}
}

func TestSimConcurrencyLimit(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	srv.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{PathPattern: "/nodes", Latency: 40 * time.Millisecond}}})
	for name, mod := range map[string]func(*Config){
		"password": func(c *Config) { c.MaxConcurrentRequests = 2 },
		"token":    func(c *Config) { useToken(c); c.MaxConcurrentRequests = 2 },
	} {
		c, w := simClient(t, srv, mod)
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				if err := c.API().Get(t.Context(), "/nodes", nil); err != nil {
					t.Errorf("%s: GET /nodes: %v", name, err)
				}
			})
		}
		wg.Wait()
		if got := w.maxCur.Load(); got > 2 {
			t.Errorf("%s: %d requests in flight at once, limit 2", name, got)
		}
		if got := w.count("GET /nodes"); got != 10 {
			t.Errorf("%s: %d GET /nodes on the wire, want 10", name, got)
		}
		if name == "password" {
			if got := w.count("POST /access/ticket"); got != 1 {
				t.Errorf("10 concurrent first requests logged in %d times, want 1", got)
			}
		}
	}
}

func TestSimRetries(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	srv.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{
		{Method: http.MethodGet, PathPattern: "/cluster/resources", ErrorRate: 1, Status: 503, Message: "busy"},
		{Method: http.MethodPost, PathPattern: "/pools", ErrorRate: 1, Status: 503, Message: "busy"},
	}})
	c, w := simClient(t, srv, nil)
	c.fastRetries()
	if _, err := c.ClusterResources(t.Context()); err == nil {
		t.Fatal("GET succeeded through a 503 fault")
	}
	if err := c.API().Post(t.Context(), "/pools", map[string]string{"poolid": "p1"}, nil); err == nil {
		t.Fatal("POST succeeded through a 503 fault")
	}
	if got := w.count("GET /cluster/resources"); got != 3 {
		t.Errorf("GET attempts = %d, want 3", got)
	}
	if got := w.count("POST /pools"); got != 1 {
		t.Errorf("POST attempts = %d, want 1", got)
	}
}

// TestSimTicketRenewedBeforeExpiry: with TicketRenewAfter below the
// server's ticket lifetime, requests never meet an expired ticket.
// PVE tickets carry their issue time in whole seconds, so lifetimes here are
// a few seconds.
func TestSimTicketRenewedBeforeExpiry(t *testing.T) {
	t.Parallel()
	srv := startSim(t, pvesim.Options{TicketLifetime: 2 * time.Second})
	c, w := simClient(t, srv, func(c *Config) { c.TicketRenewAfter = 500 * time.Millisecond })
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		if err := c.API().Get(t.Context(), "/nodes", nil); err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
		if err := c.API().Post(t.Context(), "/pools", map[string]string{"poolid": "p" + strings.Repeat("x", i)}, nil); err != nil {
			t.Fatalf("POST %d: %v", i, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := w.count("POST /access/ticket"); got < 3 {
		t.Errorf("%d logins in 3 s with renewal every 0.5 s, want several", got)
	}
	if got := w.unauthorizedCount(); got != 0 {
		t.Errorf("%d requests met an expired ticket", got)
	}
}

// TestSimWriteAfterTicketExpiry: a ticket that expires before the client
// renews it (here the server's lifetime is far shorter than the 1 h default)
// costs one 401, then the write is replayed once with a new ticket and
// applied exactly once.
func TestSimWriteAfterTicketExpiry(t *testing.T) {
	t.Parallel()
	srv := startSim(t, pvesim.Options{TicketLifetime: 2 * time.Second})
	c, w := simClient(t, srv, nil)
	if _, err := c.Verify(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3100 * time.Millisecond)
	if err := c.API().Post(t.Context(), "/pools", map[string]string{"poolid": "after-expiry"}, nil); err != nil {
		t.Fatalf("write after the ticket expired: %v", err)
	}
	if got := w.count("POST /pools"); got != 2 {
		t.Errorf("POST /pools sent %d times, want 2 (rejected with 401, then replayed)", got)
	}
	if got := srv.Counters().ByEndpoint["POST /pools"]; got != 1 {
		t.Errorf("simulator handled POST /pools %d times, want 1", got)
	}
	var pools []map[string]any
	if err := c.API().Get(t.Context(), "/pools", &pools); err != nil {
		t.Fatal(err)
	}
	if len(pools) != 1 {
		t.Errorf("pools after the replayed write: %v, want exactly one", pools)
	}
}

func TestSimCachedClusterResources(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	if err := srv.AddTemplate("pve", 9000, "tmpl"); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 100, Running: true, Config: map[string]string{"name": "web", "tags": "a;b"}}); err != nil {
		t.Fatal(err)
	}
	srv.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{PathPattern: "/cluster/resources", Latency: 100 * time.Millisecond}}})
	c, w := simClient(t, srv, useToken)

	results := make([][]Resource, 20)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			rs, err := c.CachedClusterResources(t.Context(), time.Minute)
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
			}
			results[i] = rs
		})
	}
	wg.Wait()
	if got := w.count("GET /cluster/resources"); got != 1 {
		t.Fatalf("20 concurrent callers made %d requests, want 1", got)
	}
	byID := map[int]Resource{}
	for _, r := range results[0] {
		byID[r.VMID] = r
	}
	if tm := byID[9000]; !tm.Template || tm.Type != "qemu" || tm.Node != "pve" || tm.ID != "qemu/9000" {
		t.Errorf("template row: %+v", tm)
	}
	if vm := byID[100]; vm.Template || vm.Name != "web" || vm.Status != "running" || len(vm.TagList()) != 2 {
		t.Errorf("guest row: %+v", vm)
	}
	results[1][0].Name = "mutated"
	if again, _ := c.CachedClusterResources(t.Context(), time.Minute); again[0].Name == "mutated" {
		t.Error("callers share one slice: a caller's change leaked into the cache")
	}
	if got := w.count("GET /cluster/resources"); got != 1 {
		t.Fatalf("a read within maxAge went to the server (%d requests)", got)
	}
	if _, err := c.CachedClusterResources(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if got := w.count("GET /cluster/resources"); got != 2 {
		t.Fatalf("maxAge 0 did not read again (%d requests)", got)
	}
}

// TestSimDroppedWrite: the connection closes after PVE applied a write. The
// transport must not send it again (a retried create would collide with the
// first), while a dropped read is retried.
func TestSimDroppedWrite(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	c, w := simClient(t, srv, nil)
	c.fastRetries()
	srv.DropAfterApply(http.MethodPost, "/pools")
	if err := c.API().Post(t.Context(), "/pools", map[string]string{"poolid": "once"}, nil); err == nil {
		t.Fatal("a write whose answer was lost reported success")
	}
	if got := w.count("POST /pools"); got != 1 {
		t.Fatalf("POST /pools sent %d times, want 1", got)
	}
	srv.DropAfterApply(http.MethodGet, "/pools")
	var pools []map[string]any
	if err := c.API().Get(t.Context(), "/pools", &pools); err != nil {
		t.Fatalf("a read whose first answer was lost: %v", err)
	}
	if len(pools) != 1 || w.count("GET /pools") != 2 {
		t.Fatalf("pools %v after %d GETs; want the one pool after 2", pools, w.count("GET /pools"))
	}
}

// TestSimEndpointForms connects with each way of writing the endpoint.
func TestSimEndpointForms(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	hostPort := strings.TrimPrefix(srv.URL(), "https://")
	_, port, _ := net.SplitHostPort(hostPort)
	for _, ep := range []string{
		hostPort,
		"https://" + hostPort,
		"HTTPS://" + hostPort + "/",
		"https://" + hostPort + "/api2/json",
		"localhost:" + port + "/api2/json/",
	} {
		c, _ := simClient(t, srv, func(c *Config) { useToken(c); c.Endpoint = ep })
		if _, err := c.Verify(t.Context()); err != nil {
			t.Errorf("endpoint %q: %v", ep, err)
		}
	}

	v6, err := pvesim.Start(pvesim.Options{Listen: "[::1]:0"})
	if err != nil {
		t.Skipf("no IPv6 loopback here (%v): IPv6 literals are covered by TestNormalizeEndpoint only", err)
	}
	t.Cleanup(v6.Close)
	v6.AddToken(simTokenID, simSecret)
	_, port6, _ := net.SplitHostPort(strings.TrimPrefix(v6.URL(), "https://"))
	for _, ep := range []string{"[::1]:" + port6, "https://[::1]:" + port6 + "/api2/json"} {
		c, _ := simClient(t, v6, func(c *Config) { useToken(c); c.Endpoint = ep })
		if _, err := c.Verify(t.Context()); err != nil {
			t.Errorf("endpoint %q: %v", ep, err)
		}
	}
}

// A password session logs in once per ticket lifetime, however often the
// connection is verified, and logs in again once the ticket is old.
func TestSimVerifyReusesTicket(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	c, w := simClient(t, srv, func(cfg *Config) { cfg.TicketRenewAfter = time.Hour })
	for i := range 5 {
		if _, err := c.Verify(t.Context()); err != nil {
			t.Fatalf("Verify %d: %v", i, err)
		}
	}
	if got := w.count("POST /access/ticket"); got != 1 {
		t.Errorf("5 verifications logged in %d times, want 1", got)
	}
	if got := w.count("GET /version"); got != 5 {
		t.Errorf("5 verifications read /version %d times, want 5", got)
	}

	aging, agingWire := simClient(t, srv, func(cfg *Config) { cfg.TicketRenewAfter = time.Nanosecond })
	for i := range 2 {
		if _, err := aging.Verify(t.Context()); err != nil {
			t.Fatalf("Verify %d with tickets renewed at once: %v", i, err)
		}
	}
	if got := agingWire.count("POST /access/ticket"); got != 2 {
		t.Errorf("2 verifications with tickets renewed at once logged in %d times, want 2", got)
	}
}

// VerifiedWithin needs both a completed Verify and a successful request in
// the window, and nothing after Retire.
func TestSimVerifiedWithin(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	for name, mod := range map[string]func(*Config){"password": nil, "token": useToken} {
		c, w := simClient(t, srv, mod)
		if err := c.API().Get(t.Context(), "/nodes", nil); err != nil {
			t.Fatalf("%s: GET /nodes: %v", name, err)
		}
		if _, ok := c.VerifiedWithin(time.Hour); ok {
			t.Errorf("%s: VerifiedWithin before any Verify = true", name)
		}
		want, err := c.Verify(t.Context())
		if err != nil {
			t.Fatalf("%s: Verify: %v", name, err)
		}
		before := w.total()
		if got, ok := c.VerifiedWithin(time.Hour); !ok || got != want {
			t.Errorf("%s: VerifiedWithin(1h) = %q, %v; want %q, true", name, got, ok, want)
		}
		time.Sleep(20 * time.Millisecond)
		if _, ok := c.VerifiedWithin(10 * time.Millisecond); ok {
			t.Errorf("%s: VerifiedWithin(10ms) 20ms after the last request = true", name)
		}
		if got := w.total(); got != before {
			t.Errorf("%s: VerifiedWithin sent %d requests", name, got-before)
		}
		c.Retire()
		if _, ok := c.VerifiedWithin(time.Hour); ok {
			t.Errorf("%s: VerifiedWithin after Retire = true", name)
		}
	}
}

// A request that fails authentication proves nothing.
func TestSimFailedRequestProvesNothing(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	c, _ := simClient(t, srv, useToken)
	c.fastRetries()
	if _, err := c.Verify(t.Context()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	proven := c.proof.last.Load()
	srv.RemoveToken(simTokenID)
	if err := c.API().Get(t.Context(), "/nodes", nil); err == nil {
		t.Fatal("GET /nodes with a removed token succeeded")
	}
	if got := c.proof.last.Load(); got != proven {
		t.Errorf("a 401 answer moved the last proof of authentication from %d to %d", proven, got)
	}
}

// A closed fence fails every request unsent, logins included, and without
// retries; an open one lets them through.
func TestSimFence(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	var closed atomic.Bool
	fence := func() error {
		if closed.Load() {
			return errors.New("lease lost")
		}
		return nil
	}
	for name, mod := range map[string]func(*Config){"password": nil, "token": useToken} {
		closed.Store(true)
		c, w := simClient(t, srv, func(cfg *Config) {
			if mod != nil {
				mod(cfg)
			}
			cfg.Fence = fence
		})
		_, err := c.Verify(t.Context())
		if !errors.Is(err, ErrFenced) || !strings.Contains(err.Error(), "lease lost") {
			t.Errorf("%s: Verify behind a closed fence = %v, want ErrFenced with the fence's reason", name, err)
		}
		if got := w.total(); got != 0 {
			t.Errorf("%s: %d requests went on the wire behind a closed fence", name, got)
		}
		closed.Store(false)
		if _, err := c.Verify(t.Context()); err != nil {
			t.Errorf("%s: Verify behind an open fence: %v", name, err)
		}
	}
}

// Fail retires the client and makes Get say why the connection has none;
// subscribers hear of a new reason once, and of the client coming back.
func TestSimCacheFail(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	cache := NewCache()
	events := cache.Subscribe()
	cl, _ := simClient(t, srv, useToken)
	cache.Store("lab", "gen1", cl)
	expectEvent(t, events, "lab")

	cache.Fail("lab", "cannot read Proxmox VE version: timeout")
	expectEvent(t, events, "lab")
	if !cl.Retired() {
		t.Error("Fail did not retire the client")
	}
	_, err := cache.Get("lab")
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "cannot read Proxmox VE version: timeout") {
		t.Errorf("Get after Fail = %v, want ErrNotReady with the reason", err)
	}
	cache.Fail("lab", "cannot read Proxmox VE version: timeout")
	select {
	case ev := <-events:
		t.Errorf("unexpected event for an unchanged failure: %v", ev.Object.GetName())
	default:
	}
	if fp := cache.Fingerprint("lab"); fp != "" {
		t.Errorf("Fingerprint after Fail = %q, want none", fp)
	}

	again, _ := simClient(t, srv, useToken)
	cache.Store("lab", "gen1", again)
	expectEvent(t, events, "lab")
	if got, err := cache.Get("lab"); err != nil || got != again {
		t.Errorf("Get after the client came back = %p, %v", got, err)
	}
}
