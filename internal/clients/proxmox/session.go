package proxmox

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/luthermonson/go-proxmox"
)

// ticketAuth owns the PVE ticket of a password-authenticated client and puts
// it on every request (cookie, plus the CSRF header on writes).
//
// Why not go-proxmox's own session handling (WithCredentials): it sends the
// first request without credentials and logs in only after a 401, which costs
// pveproxy's 3 s delay on every 401; when several requests get a 401 at once
// (at start-up, or when the ticket expires) only the first logs in and the
// others fail with the 401 (CreateSession answers ErrSessionExists); and it
// rewrites its session in place while other goroutines read it.
//
// The behaviour chosen here:
//   - log in before the first request; renew the ticket once it is
//     renewAfter old (default 1 h, half of PVE's 2 h lifetime), before the
//     request that needs it, so a ticket never expires under a write;
//   - one login at a time; concurrent requests wait for it and share its
//     ticket;
//   - if PVE still answers 401 (the ticket was invalidated early, e.g. the
//     server's key rotated), renew once and replay the request, whatever its
//     method. That replay is safe for writes: PVE authenticates a request
//     (ticket and CSRF token) before dispatching it to its handler, so a 401
//     means the request did nothing.
//   - renewals log in with the password, not with the old ticket, so a
//     password that stopped working is noticed within renewAfter.
type ticketAuth struct {
	next       http.RoundTripper
	loginURL   string
	username   string
	password   string
	renewAfter time.Duration
	now        func() time.Time

	loginLock chan struct{} // one login at a time; a channel so waiting honours ctx
	mu        sync.Mutex    // guards cur
	cur       *ticket
}

type ticket struct {
	value    string
	csrf     string
	obtained time.Time
	gen      uint64
}

func newTicketAuth(next http.RoundTripper, loginURL, username, password string, renewAfter time.Duration) *ticketAuth {
	return &ticketAuth{
		next: next, loginURL: loginURL, username: username, password: password,
		renewAfter: renewAfter, now: time.Now, loginLock: make(chan struct{}, 1),
	}
}

func (a *ticketAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	if a.isLogin(req) {
		return a.next.RoundTrip(req)
	}
	t, err := a.fresh(req.Context())
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	resp, err := a.next.RoundTrip(withTicket(req, t))
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !replayable(req) {
		return resp, err
	}
	discard(resp)
	if t, err = a.renewFrom(req.Context(), t.gen); err != nil {
		return nil, err
	}
	replay, err := rewind(req)
	if err != nil {
		return nil, err
	}
	return a.next.RoundTrip(withTicket(replay, t))
}

// isLogin is true for POST /access/ticket, which must not carry a ticket.
func (a *ticketAuth) isLogin(req *http.Request) bool {
	return req.URL.String() == a.loginURL
}

// fresh returns a ticket younger than renewAfter, logging in if needed.
func (a *ticketAuth) fresh(ctx context.Context) (*ticket, error) {
	a.mu.Lock()
	t := a.cur
	a.mu.Unlock()
	if t != nil && a.now().Sub(t.obtained) < a.renewAfter {
		return t, nil
	}
	var gen uint64
	if t != nil {
		gen = t.gen
	}
	return a.renewFrom(ctx, gen)
}

// renewFrom replaces ticket generation staleGen by logging in, unless another
// request already replaced it while this one waited for the login lock.
func (a *ticketAuth) renewFrom(ctx context.Context, staleGen uint64) (*ticket, error) {
	select {
	case a.loginLock <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-a.loginLock }()

	a.mu.Lock()
	cur := a.cur
	a.mu.Unlock()
	if cur != nil && cur.gen != staleGen {
		return cur, nil
	}
	t, err := a.login(ctx)
	if err != nil {
		return nil, err
	}
	t.gen = staleGen + 1
	a.mu.Lock()
	a.cur = t
	a.mu.Unlock()
	return t, nil
}

// login posts the credentials to /access/ticket.
func (a *ticketAuth) login(ctx context.Context) (*ticket, error) {
	body, err := json.Marshal(map[string]string{"username": a.username, "password": a.password})
	if err != nil {
		return nil, errors.Wrap(err, "cannot encode login request")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.loginURL, bytes.NewReader(body))
	if err != nil {
		return nil, errors.Wrap(err, "cannot build login request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	started := a.now()
	resp, err := a.next.RoundTrip(req)
	if err != nil {
		return nil, &url.Error{Op: "Post", URL: a.loginURL, Err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, &url.Error{Op: "Post", URL: a.loginURL, Err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, errors.Wrapf(loginError(resp, req.URL.Path, data), "login as %s failed", a.username)
	}
	return parseTicket(data, started)
}

// parseTicket reads /access/ticket's answer. The ticket is stamped with the
// time the login was sent, so its age is never underestimated.
func parseTicket(data []byte, obtained time.Time) (*ticket, error) {
	var env struct {
		Data struct {
			Ticket  string          `json:"ticket"`
			CSRF    string          `json:"CSRFPreventionToken"`
			NeedTFA json.RawMessage `json:"NeedTFA"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, errors.New("cannot decode the login answer (not PVE's JSON envelope)")
	}
	if len(env.Data.NeedTFA) > 0 && string(env.Data.NeedTFA) != "0" && string(env.Data.NeedTFA) != "null" {
		return nil, errors.New("the user has two-factor authentication enabled, which is not supported; use an API token")
	}
	if env.Data.Ticket == "" || env.Data.CSRF == "" {
		return nil, errors.New("the login answer has no ticket")
	}
	return &ticket{value: env.Data.Ticket, csrf: env.Data.CSRF, obtained: obtained}, nil
}

// loginError turns a failed login answer into go-proxmox's *APIError, so it
// classifies (errors.Is ErrNotAuthorized) like any other API failure.
func loginError(resp *http.Response, path string, body []byte) *proxmox.APIError {
	e := &proxmox.APIError{
		StatusCode: resp.StatusCode,
		Status:     resp.Status,
		Method:     http.MethodPost,
		Path:       path,
	}
	var env struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &env) == nil {
		e.Message = strings.TrimSpace(env.Message)
	}
	if e.Message == "" {
		_, e.Message, _ = strings.Cut(resp.Status, " ")
	}
	return e
}

// withTicket returns a copy of req carrying ticket t. go-proxmox holds no
// session of its own here, so it never sets these headers itself.
func withTicket(req *http.Request, t *ticket) *http.Request {
	r := req.Clone(req.Context())
	r.Header.Set("Cookie", "PVEAuthCookie="+t.value)
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		r.Header.Set("CSRFPreventionToken", t.csrf)
	} else {
		r.Header.Del("CSRFPreventionToken")
	}
	return r
}

// replayable is false when the request body cannot be produced again.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, errors.Wrap(err, "cannot rewind request body for replay")
	}
	r := req.Clone(req.Context())
	r.Body = body
	return r, nil
}
