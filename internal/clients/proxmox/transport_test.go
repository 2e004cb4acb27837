package proxmox

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingHandler answers every request with status (and a PVE error body),
// counting requests per method.
type countingHandler struct {
	mu     sync.Mutex
	counts map[string]int
	status int
}

func (h *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	if h.counts == nil {
		h.counts = map[string]int{}
	}
	h.counts[r.Method]++
	h.mu.Unlock()
	if h.status == http.StatusOK {
		writeJSON(w, http.StatusOK, `{"data":{"version":"9.1.2","release":"9.1","repoid":"abc"}}`)
		return
	}
	writeJSON(w, h.status, `{"data":null,"message":"injected\n"}`)
}

func (h *countingHandler) count(method string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.counts[method]
}

func TestRetriesOnlyGET(t *testing.T) {
	for _, status := range []int{429, 502, 503, 504, 595, 596} {
		h := &countingHandler{status: status}
		srv, ca := tlsServer(t, h)
		c := tokenClient(t, srv, ca, nil)
		c.fastRetries()
		ctx := t.Context()
		if err := c.API().Get(ctx, "/version", nil); err == nil {
			t.Fatalf("%d: GET succeeded", status)
		}
		if err := c.API().Post(ctx, "/nodes/pve/qemu", map[string]any{"vmid": 100}, nil); err == nil {
			t.Fatalf("%d: POST succeeded", status)
		}
		if err := c.API().Put(ctx, "/pools", map[string]any{"poolid": "x"}, nil); err == nil {
			t.Fatalf("%d: PUT succeeded", status)
		}
		if err := c.API().Delete(ctx, "/nodes/pve/qemu/100", nil); err == nil {
			t.Fatalf("%d: DELETE succeeded", status)
		}
		if got := h.count(http.MethodGet); got != 3 {
			t.Errorf("%d: GET attempts = %d, want 3", status, got)
		}
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			if got := h.count(m); got != 1 {
				t.Errorf("%d: %s attempts = %d, want 1 (writes are never retried)", status, m, got)
			}
		}
	}
}

func TestNoRetryOnDefinitiveAnswers(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 500, 501} {
		h := &countingHandler{status: status}
		srv, ca := tlsServer(t, h)
		c := tokenClient(t, srv, ca, nil)
		_ = c.API().Get(t.Context(), "/version", nil)
		if got := h.count(http.MethodGet); got != 1 {
			t.Errorf("%d: GET attempts = %d, want 1", status, got)
		}
	}
}

// hangUpHandler closes the connection without an answer for the first
// failures requests, then answers 200.
type hangUpHandler struct {
	failures int32
	seen     atomic.Int32
}

func (h *hangUpHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if h.seen.Add(1) <= h.failures {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	writeJSON(w, http.StatusOK, `{"data":{"version":"9.1.2"}}`)
}

func TestRetriesGETOnNetworkError(t *testing.T) {
	h := &hangUpHandler{failures: 2}
	srv, ca := tlsServer(t, h)
	c := tokenClient(t, srv, ca, nil)
	c.fastRetries()
	v, err := c.Verify(t.Context())
	if err != nil {
		t.Fatalf("Verify after two dropped connections: %v", err)
	}
	if v != "9.1.2" || h.seen.Load() != 3 {
		t.Fatalf("version %q after %d attempts, want 9.1.2 after 3", v, h.seen.Load())
	}
}

func TestNoRetryPOSTOnNetworkError(t *testing.T) {
	h := &hangUpHandler{failures: 1}
	srv, ca := tlsServer(t, h)
	c := tokenClient(t, srv, ca, nil)
	err := c.API().Post(t.Context(), "/nodes/pve/qemu/100/status/start", nil, nil)
	if err == nil {
		t.Fatal("POST on a dropped connection succeeded")
	}
	if got := h.seen.Load(); got != 1 {
		t.Fatalf("POST attempts = %d, want 1", got)
	}
}

func TestRetryRespectsContext(t *testing.T) {
	h := &countingHandler{status: 503}
	srv, ca := tlsServer(t, h)
	c := tokenClient(t, srv, ca, nil) // default backoff: 200ms then 400ms
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := c.API().Get(ctx, "/version", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
	if got := h.count(http.MethodGet); got != 1 {
		t.Fatalf("GET attempts = %d, want 1 (the context ended during the backoff)", got)
	}
}

func TestRetryWait(t *testing.T) {
	p := retryPolicy{attempts: 3, backoff: 100 * time.Millisecond, maxBackoff: time.Second}
	if got := p.wait(1, nil); got != 100*time.Millisecond {
		t.Errorf("first wait = %v", got)
	}
	if got := p.wait(2, nil); got != 200*time.Millisecond {
		t.Errorf("second wait = %v", got)
	}
	resp := &http.Response{Header: http.Header{"Retry-After": []string{"30"}}}
	if got := p.wait(1, resp); got != time.Second {
		t.Errorf("Retry-After 30 s gave %v, want the 1 s cap", got)
	}
}

// inflightHandler records the highest number of requests it served at once.
type inflightHandler struct {
	cur, max, total atomic.Int32
	delay           time.Duration
}

func (h *inflightHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := h.cur.Add(1)
	for {
		m := h.max.Load()
		if n <= m || h.max.CompareAndSwap(m, n) {
			break
		}
	}
	h.total.Add(1)
	defer h.cur.Add(-1)
	select {
	case <-time.After(h.delay):
	case <-r.Context().Done():
		// The client gave up. An answer written now can still reach it: its
		// TLS close_notify goes out before the socket closes, and Go's
		// transport takes a response that races the close. Abort instead,
		// as a hung server would never answer.
		panic(http.ErrAbortHandler)
	}
	writeJSON(w, http.StatusOK, `{"data":{"version":"9.1.2"}}`)
}

func TestConcurrencyLimit(t *testing.T) {
	for _, tc := range []struct{ limit, want int32 }{{2, 2}, {0, 4}} {
		h := &inflightHandler{delay: 30 * time.Millisecond}
		srv, ca := tlsServer(t, h)
		c := tokenClient(t, srv, ca, func(cfg *Config) { cfg.MaxConcurrentRequests = int(tc.limit) })
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				method := []string{http.MethodGet, http.MethodPost}[h.total.Load()%2]
				if err := c.API().Req(t.Context(), method, "/version", nil, nil); err != nil {
					t.Errorf("request: %v", err)
				}
			})
		}
		wg.Wait()
		if got := h.max.Load(); got > tc.want {
			t.Errorf("limit %d: %d requests in flight at once, want at most %d", tc.limit, got, tc.want)
		}
		if got := h.total.Load(); got != 12 {
			t.Errorf("limit %d: server saw %d requests, want 12", tc.limit, got)
		}
	}
}

// blockingHandler holds each request until release is closed.
type blockingHandler struct {
	arrived chan struct{}
	release chan struct{}
	seen    atomic.Int32
}

func (h *blockingHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.seen.Add(1)
	h.arrived <- struct{}{}
	<-h.release
	writeJSON(w, http.StatusOK, `{"data":{"version":"9.1.2"}}`)
}

func TestRetire(t *testing.T) {
	h := &blockingHandler{arrived: make(chan struct{}, 10), release: make(chan struct{})}
	srv, ca := tlsServer(t, h)
	c := tokenClient(t, srv, ca, func(cfg *Config) { cfg.MaxConcurrentRequests = 1 })

	inflight := make(chan error, 1)
	go func() { inflight <- c.API().Get(t.Context(), "/version", nil) }()
	<-h.arrived
	waiting := make(chan error, 1)
	go func() { waiting <- c.API().Post(t.Context(), "/nodes/pve/qemu", nil, nil) }()
	time.Sleep(50 * time.Millisecond) // let the POST queue for the only slot

	c.Retire()
	if _, err := c.Verify(t.Context()); !errors.Is(err, ErrClientRetired) {
		t.Fatalf("Verify after Retire: %v, want ErrClientRetired", err)
	}
	close(h.release)
	if err := <-inflight; err != nil {
		t.Fatalf("request in flight at Retire failed: %v", err)
	}
	if err := <-waiting; !errors.Is(err, ErrClientRetired) {
		t.Fatalf("request queued at Retire: %v, want ErrClientRetired", err)
	}
	if got := h.seen.Load(); got != 1 {
		t.Fatalf("server saw %d requests, want only the one in flight before Retire", got)
	}
	if Classify(ErrClientRetired) != OtherFailure || !c.Retired() {
		t.Fatal("retired state not reported")
	}
}

func TestPerAttemptTimeout(t *testing.T) {
	h := &inflightHandler{delay: 10 * time.Second}
	srv, ca := tlsServer(t, h)
	c := tokenClient(t, srv, ca, func(cfg *Config) { cfg.Timeout = 100 * time.Millisecond })
	c.fastRetries()
	_, err := c.Verify(t.Context())
	if Classify(err) != EndpointUnreachable {
		t.Fatalf("Verify against a hung server: %v (%q), want EndpointUnreachable", err, Classify(err))
	}
	if got := h.total.Load(); got != 3 {
		t.Fatalf("attempts = %d, want 3 (a timed-out GET is retried)", got)
	}
}

func TestVerifyTLS(t *testing.T) {
	srv, ca := tlsServer(t, &countingHandler{status: http.StatusOK})
	unknown := tokenClient(t, srv, nil, nil)
	if _, err := unknown.Verify(t.Context()); Classify(err) != TLSVerificationFailed {
		t.Fatalf("unknown CA: %v (%q), want TLSVerificationFailed", err, Classify(err))
	}
	for name, mod := range map[string]func(*Config){
		"CA bundle": nil,
		"insecure":  func(cfg *Config) { cfg.CAPEM, cfg.InsecureSkipVerify = nil, true },
	} {
		v, err := tokenClient(t, srv, ca, mod).Verify(t.Context())
		if err != nil || v != "9.1.2" {
			t.Fatalf("%s: Verify = %q, %v", name, v, err)
		}
	}
	if _, err := New(Config{Endpoint: srv.URL, TokenID: "a@b!c", Secret: "x", CAPEM: []byte("not pem")}); err == nil {
		t.Fatal("New accepted a CA bundle without certificates")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no endpoint":       {TokenID: "a@pam!x", Secret: "s"},
		"http":              {Endpoint: "http://pve", TokenID: "a@pam!x", Secret: "s"},
		"no credentials":    {Endpoint: "pve"},
		"both":              {Endpoint: "pve", Username: "root@pam", Password: "p", TokenID: "a@pam!x", Secret: "s"},
		"user without pass": {Endpoint: "pve", Username: "root@pam"},
		"token no secret":   {Endpoint: "pve", TokenID: "a@pam!x"},
		"token bad form":    {Endpoint: "pve", TokenID: "root@pam", Secret: "s"},
		"token no realm":    {Endpoint: "pve", TokenID: "root!x", Secret: "s"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}
