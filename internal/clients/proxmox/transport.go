package proxmox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubemox/provider-proxmox/internal/metrics"
)

// The transport is a chain of small RoundTrippers, outermost first:
//
//	retireGuard -> authProof -> ticketAuth (password auth only) -> retrying -> failover (several endpoints only) -> limiter -> measured (with metrics) -> *http.Transport
//
// Every request go-proxmox makes, and our own logins, pass through it, so the
// concurrency limit, the retirement check, the retry policy and the metrics
// cover all of them.

// retireGuard fails requests fast once the client is retired, before they
// wait for a login or a concurrency slot.
type retireGuard struct {
	next    http.RoundTripper
	retired *atomic.Bool
}

func (g *retireGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if g.retired.Load() {
		closeRequestBody(req)
		return nil, ErrClientRetired
	}
	return g.next.RoundTrip(req)
}

// authProof records when a request last got a 2xx answer. It sits above
// the authentication, so it sees the final answer of a request (after a
// ticket renewal and replay) and never our own logins: a 2xx here means
// the endpoint answered and accepted the credential.
type authProof struct {
	next http.RoundTripper
	now  func() time.Time
	last atomic.Int64 // UnixNano; 0 = never
}

func (p *authProof) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.next.RoundTrip(req)
	if err == nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		p.last.Store(p.now().UnixNano())
	}
	return resp, err
}

// within reports whether a request succeeded within the last d.
func (p *authProof) within(d time.Duration) bool {
	last := p.last.Load()
	return last != 0 && p.now().Sub(time.Unix(0, last)) < d
}

// limiter enforces MaxConcurrentRequests, the per-attempt timeout and the
// fence. A slot
// is held until the response body is closed: a request is in flight on the
// server until its answer has been read.
type limiter struct {
	next    http.RoundTripper
	sem     chan struct{}
	retired *atomic.Bool
	fence   func() error // nil: always open
	timeout time.Duration
	metrics *metrics.Connection // counts waiting and in-flight requests; may be nil
}

func (l *limiter) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := l.acquire(req.Context()); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	// Checked again after the wait: retries, replays and logins also pass
	// here, and none of them may reach the server once the client is retired.
	if l.retired.Load() {
		l.release()
		closeRequestBody(req)
		return nil, ErrClientRetired
	}
	if l.fence != nil {
		if err := l.fence(); err != nil {
			l.release()
			closeRequestBody(req)
			return nil, fmt.Errorf("%w: %w", ErrFenced, err)
		}
	}
	ctx, cancel := context.WithTimeout(req.Context(), l.timeout)
	resp, err := l.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		l.release()
		return nil, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: func() { cancel(); l.release() }}
	return resp, nil
}

// acquire waits for a slot, counted as waiting meanwhile.
func (l *limiter) acquire(ctx context.Context) error {
	l.metrics.AddWaiting(1)
	defer l.metrics.AddWaiting(-1)
	select {
	case l.sem <- struct{}{}:
		l.metrics.AddInFlight(1)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *limiter) release() {
	<-l.sem
	l.metrics.AddInFlight(-1)
}

// measured reports each attempt that goes on the wire (a retry, a replay
// after a ticket renewal and a login each count) by route template, with
// the time to its response headers. It sits below the limiter, so waiting
// for a concurrency slot is not counted as Proxmox VE's latency.
type measured struct {
	next    http.RoundTripper
	metrics *metrics.Connection
}

func (m *measured) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := m.next.RoundTrip(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	m.metrics.ObserveRequest(req.Method, RouteTemplate(req.URL.EscapedPath()), status, time.Since(start))
	return resp, err
}

// releasingBody runs release exactly once, when the body is closed.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// retryPolicy says which attempts are repeated. Only GET is retried: PVE's
// writes are not idempotent (a POST that timed out may have started a task),
// so a failed write is reported to the reconciler, which observes before it
// acts again.
type retryPolicy struct {
	attempts   int           // total attempts, including the first
	backoff    time.Duration // before the 2nd attempt; doubled each time
	maxBackoff time.Duration // also caps a server's Retry-After
}

func defaultRetryPolicy() retryPolicy {
	return retryPolicy{attempts: 3, backoff: 200 * time.Millisecond, maxBackoff: 2 * time.Second}
}

// retryableStatus are the answers of an overloaded or restarting pveproxy, a
// reverse proxy in front of it, or a cluster node pveproxy could not reach.
var retryableStatus = map[int]bool{
	http.StatusTooManyRequests:    true,
	http.StatusBadGateway:         true,
	http.StatusServiceUnavailable: true,
	http.StatusGatewayTimeout:     true,
	595:                           true,
	596:                           true,
}

// retrying is ours, not go-proxmox's WithRetry: that one also retries PUT,
// DELETE and buffered POSTs, which PVE does not make idempotent.
type retrying struct {
	next    http.RoundTripper
	retired *atomic.Bool
	policy  retryPolicy
}

func (r *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return r.next.RoundTrip(req)
	}
	for attempt := 1; ; attempt++ {
		resp, err := r.next.RoundTrip(req)
		if attempt >= r.policy.attempts || !r.shouldRetry(req, resp, err) {
			return resp, err
		}
		wait := r.policy.wait(attempt, resp)
		discard(resp)
		if err := sleepCtx(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

func (r *retrying) shouldRetry(req *http.Request, resp *http.Response, err error) bool {
	if req.Context().Err() != nil || r.retired.Load() {
		return false
	}
	if _, probe := pinned(req.Context()); probe {
		return false // a probe repeats on its own schedule
	}
	if err != nil {
		return !errors.Is(err, ErrClientRetired) && !errors.Is(err, ErrFenced) && !isTLSVerificationError(err)
	}
	return retryableStatus[resp.StatusCode]
}

// wait returns the backoff before the attempt after the given one, honouring
// a Retry-After hint up to maxBackoff.
func (p retryPolicy) wait(attempt int, resp *http.Response) time.Duration {
	d := p.backoff << (attempt - 1)
	if resp != nil {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && time.Duration(s)*time.Second > d {
			d = time.Duration(s) * time.Second
		}
	}
	return min(d, p.maxBackoff)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// discard drains a little of a response we will not return so its connection
// can be reused, then closes it (which releases its concurrency slot).
func discard(resp *http.Response) {
	if resp == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// isTLSVerificationError reports a certificate the client refused. Such a
// failure is permanent: retrying cannot fix it.
func isTLSVerificationError(err error) bool {
	var (
		verr     *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		roots    x509.SystemRootsError
	)
	return errors.As(err, &verr) || errors.As(err, &unknown) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &roots)
}
