package proxmox

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/luthermonson/go-proxmox"
)

// A Proxmox VE cluster answers its API on every node, so a connection may
// name several endpoints. The failover layer sits between the retry layer
// and the limiter:
//
//	... -> ticketAuth -> retrying -> failover -> limiter -> ...
//
// so one ticket (valid on every node of the cluster) serves all endpoints,
// each retry of a GET picks the endpoint afresh, and the per-attempt timeout
// of the limiter is seen here as the endpoint's failure.
//
// Rules:
//   - a request goes to the first healthy endpoint, in the configured order
//     (endpoint, then endpoints); when none is healthy, to the down ones in
//     the same order, since refusing to try would only delay recovery;
//   - only a transport error marks an endpoint down: connection refused or
//     reset, a TLS failure, a timeout. An HTTP answer never does, whatever
//     its status: PVE's own errors are 500s, and pveproxy answers 595/596
//     for a /nodes/{node}/... path when *that node* is unreachable, which
//     another endpoint would answer just the same;
//   - a request that never left the client (the dial or the TLS handshake
//     failed) is sent to the next endpoint at once, whatever its method;
//     one that may have reached the server is not replayed here (the retry
//     layer repeats GETs, which then pick the next endpoint; writes are
//     reported, and the reconciler observes before it acts again);
//   - a down endpoint is probed in the background with an authenticated GET
//     /version pinned to it, which also re-verifies the credential there,
//     and takes requests again once a probe succeeds.

// probeInterval is how often a down endpoint is probed by default.
const defaultProbeInterval = 5 * time.Second

// EndpointState is the health of one endpoint of a client, as its traffic
// and probes last saw it. Message holds no credential.
type EndpointState struct {
	URL     string // normalised: https://host:port/api2/json
	Healthy bool
	Active  bool // the endpoint the last successful request went to
	Message string
	Since   time.Time // when Healthy last changed (zero: never)
}

// pinKey marks a request that must go to one endpoint (a probe).
type pinKey struct{}

func pinTo(ctx context.Context, i int) context.Context {
	return context.WithValue(ctx, pinKey{}, i)
}

func pinned(ctx context.Context) (int, bool) {
	i, ok := ctx.Value(pinKey{}).(int)
	return i, ok
}

type endpointState struct {
	host    string // host:port, for the request URL and Host header
	url     string
	healthy bool
	message string
	since   time.Time
}

// endpointSet is the health of a client's endpoints. onDown is called once
// per healthy-to-down transition (to start a probe); onChange after any
// change of health or of the active endpoint.
type endpointSet struct {
	mu       sync.Mutex
	eps      []*endpointState
	active   int
	now      func() time.Time
	onDown   func(i int)
	onChange func(switched bool)
	scrub    func(string) string // hides the client's secrets in messages
}

func newEndpointSet(urls []string) (*endpointSet, error) {
	s := &endpointSet{now: time.Now, onDown: func(int) {}, onChange: func(bool) {}, scrub: func(m string) string { return m }}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, err
		}
		s.eps = append(s.eps, &endpointState{host: u.Host, url: raw, healthy: true})
	}
	return s, nil
}

// order lists the endpoints to try: healthy ones first, then down ones,
// each group in configured order.
func (s *endpointSet) order() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, 0, len(s.eps))
	for i, e := range s.eps {
		if e.healthy {
			out = append(out, i)
		}
	}
	for i, e := range s.eps {
		if !e.healthy {
			out = append(out, i)
		}
	}
	return out
}

// succeeded records an answer from endpoint i: it is reachable, and it is
// where requests go now.
func (s *endpointSet) succeeded(i int) {
	s.mu.Lock()
	e := s.eps[i]
	changed := !e.healthy || s.active != i
	switched := s.active != i
	if !e.healthy {
		e.healthy, e.message, e.since = true, "", s.now()
	}
	s.active = i
	s.mu.Unlock()
	if changed {
		s.onChange(switched)
	}
}

// failed records a transport error of endpoint i.
func (s *endpointSet) failed(i int, err error) {
	s.mu.Lock()
	e := s.eps[i]
	wasHealthy := e.healthy
	e.message = s.scrub(transportMessage(err))
	if wasHealthy {
		e.healthy, e.since = false, s.now()
	}
	s.mu.Unlock()
	if wasHealthy {
		s.onDown(i)
		s.onChange(false)
	}
}

// recovered records a successful probe of endpoint i: it takes requests
// again (and, being earlier in the order, maybe all of them).
func (s *endpointSet) recovered(i int) {
	s.mu.Lock()
	e := s.eps[i]
	changed := !e.healthy
	if changed {
		e.healthy, e.message, e.since = true, "", s.now()
	}
	s.mu.Unlock()
	if changed {
		s.onChange(false)
	}
}

// probeFailed keeps endpoint i down with why its probe failed.
func (s *endpointSet) probeFailed(i int, msg string) {
	s.mu.Lock()
	s.eps[i].message = s.scrub(msg)
	s.mu.Unlock()
}

func (s *endpointSet) healthy(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eps[i].healthy
}

func (s *endpointSet) states() []EndpointState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]EndpointState, len(s.eps))
	for i, e := range s.eps {
		out[i] = EndpointState{URL: e.url, Healthy: e.healthy, Active: i == s.active, Message: e.message, Since: e.since}
	}
	return out
}

// at returns a copy of req addressed to endpoint i.
func (s *endpointSet) at(req *http.Request, i int) *http.Request {
	s.mu.Lock()
	host := s.eps[i].host
	s.mu.Unlock()
	r := req.Clone(req.Context())
	r.URL.Host = host
	r.Host = host
	return r
}

// transportMessage is a transport error as a status message. These errors
// name the address and what failed; they never carry the request's headers.
func transportMessage(err error) string {
	msg := err.Error()
	if errors.Is(err, context.DeadlineExceeded) {
		msg = "timeout: no answer within the request timeout"
	}
	return msg
}

// failover is ours, not go-proxmox's WithAdditionalEndpoints: that one also
// fails over on 502-504 and 595/596, which another node would answer alike.
type failover struct {
	next http.RoundTripper
	set  *endpointSet
}

func (f *failover) RoundTrip(req *http.Request) (*http.Response, error) {
	if i, ok := pinned(req.Context()); ok {
		resp, err := f.next.RoundTrip(f.set.at(req, i))
		if err != nil && endpointFailure(req, err) {
			f.set.probeFailed(i, transportMessage(err))
		}
		return resp, err
	}
	order := f.set.order()
	for n, i := range order {
		attempt := req
		if n > 0 {
			var err error
			if attempt, err = rewind(req); err != nil {
				return nil, err
			}
		}
		resp, err := f.next.RoundTrip(f.set.at(attempt, i))
		if err == nil {
			f.set.succeeded(i)
			return resp, nil
		}
		if !endpointFailure(req, err) {
			return nil, err
		}
		f.set.failed(i, err)
		if n == len(order)-1 || !neverSent(err) || !replayable(req) {
			return nil, err
		}
	}
	return nil, errors.New("connection has no endpoint") // unreachable: a client has at least one
}

// endpointFailure is an error of the endpoint's transport, not one of ours
// (retired, fenced) nor the caller giving up.
func endpointFailure(req *http.Request, err error) bool {
	return req.Context().Err() == nil && !errors.Is(err, ErrClientRetired) && !errors.Is(err, ErrFenced)
}

// neverSent reports an error that happened before the request went on the
// wire: it failed to dial or to complete the TLS handshake, so the server
// cannot have acted on it and sending it elsewhere is safe for a write.
func neverSent(err error) bool {
	var (
		opErr  *net.OpError
		dnsErr *net.DNSError
		recErr tls.RecordHeaderError
		alert  tls.AlertError
	)
	switch {
	case errors.As(err, &opErr) && opErr.Op == "dial", errors.As(err, &dnsErr):
		return true
	case isTLSVerificationError(err), errors.As(err, &recErr), errors.As(err, &alert):
		return true
	}
	return strings.Contains(err.Error(), "TLS handshake")
}

// prober probes down endpoints until they answer, for the client's
// lifetime: Retire cancels ctx, and every probe goroutine ends with it.
type prober struct {
	ctx      context.Context //nolint:containedctx // the client's lifetime: probes outlive any request and end with Retire
	wg       sync.WaitGroup
	interval time.Duration
	probe    func(ctx context.Context) error
	set      *endpointSet
}

// start probes endpoint i in the background until it is healthy again.
func (p *prober) start(i int) {
	if p.ctx.Err() != nil {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.run(i)
	}()
}

func (p *prober) run(i int) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		if p.set.healthy(i) {
			return // a last-resort request found it answering
		}
		err := p.probe(pinTo(p.ctx, i))
		if p.ctx.Err() != nil {
			return
		}
		if err == nil {
			p.set.recovered(i)
			return
		}
		if msg, answered := answeredProbe(err); answered {
			p.set.probeFailed(i, msg)
		}
	}
}

// answeredProbe returns the message of a probe the endpoint answered with an
// error (a rejected credential, say); a transport error's message was
// recorded by the failover layer, without go-proxmox's URL of the first
// endpoint in it.
func answeredProbe(err error) (string, bool) {
	apiErr, ok := proxmox.AsAPIError(err)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("the endpoint answers but the credential check failed: %d %s", apiErr.StatusCode, apiErr.Message), true
}
