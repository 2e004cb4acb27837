package proxmox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/metrics"
)

const (
	defaultMaxConcurrentRequests = 4
	defaultTimeout               = 30 * time.Second
	// defaultTicketRenewAfter is half of PVE's fixed 2 h ticket lifetime, so
	// a ticket is always renewed with an hour to spare.
	defaultTicketRenewAfter = time.Hour
	userAgent               = "provider-proxmox"
)

// ErrClientRetired is returned for every request started after Retire.
var ErrClientRetired = errors.New("proxmox client was retired (its connection was reconfigured or removed); retry with the current client")

// ErrFenced wraps the error of a closed Config.Fence: the request was not
// sent, and is not retried.
var ErrFenced = errors.New("proxmox request not sent")

// Config describes how to reach and authenticate to one Proxmox VE endpoint.
type Config struct {
	Endpoint string // as the user typed it; New normalises it
	// Endpoints are more endpoints of the same cluster, each normalised
	// like Endpoint; requests fail over to them on transport errors (see
	// failover.go). Duplicates (after normalisation) are ignored.
	Endpoints             []string
	Username, Password    string // password login (ticket)
	TokenID, Secret       string // API token "user@realm!name" + secret
	CAPEM                 []byte // extra trusted CAs (PEM); nil = system roots
	InsecureSkipVerify    bool
	MaxConcurrentRequests int           // <=0 means 4
	Timeout               time.Duration // per HTTP request attempt; 0 means 30s

	// TicketRenewAfter is how long a password session's ticket is used
	// before it is renewed; 0 means 1h (PVE tickets expire after 2h).
	TicketRenewAfter time.Duration

	// Fence, when set, is asked before each attempt goes on the wire; an
	// error fails the request unsent. With leader election it closes when
	// this replica may have lost its lease, so a replica that is no longer
	// the leader sends Proxmox VE nothing.
	Fence func() error

	// ProbeInterval is how often a down endpoint is probed; 0 means 5s.
	ProbeInterval time.Duration

	// OnEndpointChange, when set, is called after an endpoint went down or
	// came back, or requests moved to another endpoint; only with several
	// endpoints. It must not block.
	OnEndpointChange func()

	// Metrics receives this client's requests and the tasks it starts and
	// sees finish, labelled with its connection; nil measures nothing.
	Metrics *metrics.Connection
}

// Client is a Proxmox VE API client for one connection. It is safe for
// concurrent use.
type Client struct {
	api     *proxmox.Client
	base    *http.Transport
	retired *atomic.Bool
	retry   *retrying
	session *ticketAuth // nil with token auth
	secrets []string    // redacted from error messages

	resources *resourcesMemo
	listings  *listingMemo
	metrics   *metrics.Connection
	tasks     *taskClock
	slots     int // MaxConcurrentRequests in effect

	// proof is when an authenticated request last succeeded, and the
	// version the last Verify read: see VerifiedWithin.
	proof   *authProof
	version atomic.Pointer[string]

	// endpoints is the health of the endpoints; probes runs until Retire.
	endpoints *endpointSet
	probes    *prober
	stop      context.CancelFunc
}

// New builds a client without any network I/O.
func New(cfg Config) (*Client, error) {
	return newClient(cfg, nil)
}

// newClient lets tests wrap the wire-level transport (below the limiter) to
// observe every request that actually leaves the client.
func newClient(cfg Config, wrapWire func(http.RoundTripper) http.RoundTripper) (*Client, error) {
	urls, err := NormalizeEndpoints(cfg.Endpoint, cfg.Endpoints)
	if err != nil {
		return nil, err
	}
	endpoint := urls[0]
	if err := checkCredentials(cfg); err != nil {
		return nil, err
	}
	tlsCfg, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	limit, timeout := limits(cfg)

	c := &Client{
		retired: &atomic.Bool{}, resources: &resourcesMemo{}, metrics: cfg.Metrics, tasks: newTaskClock(),
		proof: &authProof{now: time.Now}, listings: newListingMemo(), slots: limit,
	}
	c.base = baseTransport(tlsCfg, limit)
	var wire http.RoundTripper = c.base
	if wrapWire != nil {
		wire = wrapWire(wire)
	}
	if cfg.Metrics != nil {
		wire = &measured{next: wire, metrics: cfg.Metrics}
	}
	lim := &limiter{next: wire, sem: make(chan struct{}, limit), retired: c.retired, fence: cfg.Fence, timeout: timeout, metrics: cfg.Metrics}
	if c.endpoints, err = newEndpointSet(urls); err != nil {
		return nil, errors.Wrap(err, "invalid endpoint")
	}
	c.retry = &retrying{next: &failover{next: lim, set: c.endpoints}, retired: c.retired, policy: defaultRetryPolicy()}
	rt, opts := c.authentication(cfg, endpoint)
	c.watchEndpoints(cfg)
	c.proof.next = rt
	httpClient := &http.Client{Transport: &retireGuard{next: c.proof, retired: c.retired}, Timeout: overallTimeout(timeout)}
	opts = append(opts, proxmox.WithLogger(noopLogger{}), proxmox.WithUserAgent(userAgent), proxmox.WithHTTPClient(httpClient))
	c.api = proxmox.NewClient(endpoint, opts...)
	return c, nil
}

// watchEndpoints wires the endpoints' health to the background probes and
// to cfg.OnEndpointChange. The probes live as long as the client, not as
// any reconcile: Retire stops them.
func (c *Client) watchEndpoints(cfg Config) {
	interval := cfg.ProbeInterval
	if interval <= 0 {
		interval = defaultProbeInterval
	}
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	c.probes = &prober{ctx: ctx, interval: interval, set: c.endpoints, probe: c.probe}
	c.endpoints.scrub = c.scrub
	if len(c.endpoints.eps) < 2 {
		// With one endpoint there is nowhere else to go: its own traffic
		// (and the connection's next check) finds out when it is back.
		return
	}
	c.endpoints.onDown = c.probes.start
	c.endpoints.onChange = func(switched bool) {
		if switched {
			// Another endpoint serves now: the proof of the last one says
			// nothing about it, so the next check verifies the credential
			// there with a request of its own.
			c.proof.last.Store(0)
		}
		if cfg.OnEndpointChange != nil {
			cfg.OnEndpointChange()
		}
	}
}

// probe is an authenticated GET /version to the endpoint ctx is pinned to:
// it answers, and accepts the credential (a password session's ticket is
// valid on every node, so this logs in only if the ticket needs renewal).
func (c *Client) probe(ctx context.Context) error {
	var v proxmox.Version
	return c.redact(c.api.Get(ctx, "/version", &v))
}

// Endpoints returns the health of the client's endpoints, endpoint first.
func (c *Client) Endpoints() []EndpointState { return c.endpoints.states() }

// NormalizeEndpoints normalises a connection's endpoint and its additional
// endpoints, the first one first, without duplicates.
func NormalizeEndpoints(endpoint string, more []string) ([]string, error) {
	first, err := NormalizeEndpoint(endpoint)
	if err != nil {
		return nil, errors.Wrap(err, "invalid endpoint")
	}
	out := []string{first}
	for i, raw := range more {
		u, err := NormalizeEndpoint(raw)
		if err != nil {
			return nil, errors.Wrapf(err, "invalid endpoints[%d]", i)
		}
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out, nil
}

func limits(cfg Config) (int, time.Duration) {
	limit, timeout := cfg.MaxConcurrentRequests, cfg.Timeout
	if limit <= 0 {
		limit = defaultMaxConcurrentRequests
	}
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	return limit, timeout
}

// authentication returns the transport above the retry layer and the
// go-proxmox options for cfg's credential: a token is go-proxmox's header;
// a password session is our ticketAuth (see its comment for why).
func (c *Client) authentication(cfg Config, endpoint string) (http.RoundTripper, []proxmox.Option) {
	if cfg.TokenID != "" {
		c.secrets = []string{cfg.Secret}
		return c.retry, []proxmox.Option{proxmox.WithAPIToken(cfg.TokenID, cfg.Secret)}
	}
	renew := cfg.TicketRenewAfter
	if renew <= 0 {
		renew = defaultTicketRenewAfter
	}
	c.session = newTicketAuth(c.retry, endpoint+"/access/ticket", cfg.Username, cfg.Password, renew)
	c.secrets = []string{cfg.Password}
	return c.session, nil
}

// overallTimeout bounds one logical request (login, attempts, backoff and a
// replay after a ticket renewal) on top of the per-attempt timeout.
func overallTimeout(perAttempt time.Duration) time.Duration {
	return 6*perAttempt + 10*time.Second
}

func checkCredentials(cfg Config) error {
	hasPassword := cfg.Username != "" || cfg.Password != ""
	hasToken := cfg.TokenID != "" || cfg.Secret != ""
	switch {
	case hasPassword && hasToken:
		return errors.New("give either username/password or tokenID/secret, not both")
	case hasToken && (cfg.TokenID == "" || cfg.Secret == ""):
		return errors.New("token authentication needs both tokenID and secret")
	case hasToken && !validTokenID(cfg.TokenID):
		return errors.Errorf("tokenID %q is not of the form user@realm!name", cfg.TokenID)
	case hasPassword && (cfg.Username == "" || cfg.Password == ""):
		return errors.New("password authentication needs both username and password")
	case !hasPassword && !hasToken:
		return errors.New("no credentials: give username/password or tokenID/secret")
	}
	return nil
}

func tlsConfig(cfg Config) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // only when the user asks for it
	if len(cfg.CAPEM) == 0 {
		return tc, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(cfg.CAPEM) {
		return nil, errors.New("CA bundle contains no valid PEM certificate")
	}
	tc.RootCAs = pool
	return tc, nil
}

func baseTransport(tc *tls.Config, limit int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tc
	t.MaxIdleConnsPerHost = limit
	t.MaxConnsPerHost = limit
	t.ForceAttemptHTTP2 = false
	return t
}

// Slots is how many requests the client sends at once (MaxConcurrentRequests
// in effect).
func (c *Client) Slots() int { return c.slots }

// API returns the underlying go-proxmox client. All its requests go through
// this Client's transport (limits, retries, sessions, retirement).
func (c *Client) API() *proxmox.Client { return c.api }

// Retire makes every request that has not yet been sent fail with
// ErrClientRetired, and stops the probes of down endpoints; requests
// already in flight finish normally.
func (c *Client) Retire() {
	c.retired.Store(true)
	c.stop()
	c.base.CloseIdleConnections()
}

// Retired reports whether Retire was called.
func (c *Client) Retired() bool { return c.retired.Load() }

// Verify makes one authenticated call (GET /version) and returns the PVE
// version. A password session reuses its ticket while it is younger than
// TicketRenewAfter and logs in only then: the password is proven once per
// ticket lifetime, not once per verification (a connection is verified
// each time a resource starts or stops using it).
func (c *Client) Verify(ctx context.Context) (string, error) {
	var v proxmox.Version
	if err := c.api.Get(ctx, "/version", &v); err != nil {
		return "", c.redact(errors.Wrap(err, "cannot read Proxmox VE version"))
	}
	if v.Version == "" {
		return "", errors.New("Proxmox VE returned an empty version")
	}
	c.version.Store(&v.Version)
	return v.Version, nil
}

// VerifiedWithin returns the version the last Verify read when an
// authenticated request of this client succeeded within the last d: the
// managed resources' own traffic then proves that the endpoint answers and
// the credential works, and a re-verification needs no request of its own.
func (c *Client) VerifiedWithin(d time.Duration) (string, bool) {
	v := c.version.Load()
	if v == nil || c.retired.Load() || !c.proof.within(d) {
		return "", false
	}
	return *v, true
}

// noopLogger keeps go-proxmox silent: at debug level it prints request and
// response bodies, which carry guest passwords and cloud-init secrets.
type noopLogger struct{}

func (noopLogger) Debugf(string, ...interface{}) {}
func (noopLogger) Errorf(string, ...interface{}) {}
func (noopLogger) Infof(string, ...interface{})  {}
func (noopLogger) Warnf(string, ...interface{})  {}

// validTokenID checks the user@realm!name shape of an API token ID.
func validTokenID(id string) bool {
	user, name, ok := strings.Cut(id, "!")
	if !ok || name == "" {
		return false
	}
	u, realm, ok := strings.Cut(user, "@")
	return ok && u != "" && realm != ""
}
