package pvesim

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Options configures a simulated cluster.
type Options struct {
	// Nodes are the cluster's node names; default ["pve"].
	Nodes []string
	// SharedStorage, when set, names a storage with shared=1 present on every node.
	SharedStorage string
	// TaskDurations maps a task type ("qmclone", "qmcreate", "qmstart", ...) to how long its
	// task runs; key "" is the default for all types. Zero finishes at once, still as a task.
	TaskDurations map[string]time.Duration
	// TaskDurationsMax, for a type whose entry is longer than its TaskDurations
	// one, makes each task of that type run a uniformly random time between
	// the two (real clones take 2-5 s, not always the same).
	TaskDurationsMax map[string]time.Duration
	// ResourcesLag delays status, name, uptime and template in /cluster/resources.
	ResourcesLag time.Duration
	// AgentStartDelay is how long after a start the guest agent begins to answer.
	AgentStartDelay time.Duration
	// AuthFailDelay delays every 401 answer (PVE waits 3 s; default 0).
	AuthFailDelay time.Duration
	// TicketLifetime bounds ticket validity; default 2h as PVE.
	TicketLifetime time.Duration
	// LogRequests keeps every authenticated or rejected request in RequestLog.
	LogRequests bool
	// Listen is the address to listen on; default "127.0.0.1:0".
	Listen string
	// ExtraListen are more addresses serving the same cluster, as the
	// pveproxy of other nodes would (see listeners.go).
	ExtraListen []string
	// StateFile, when set, is loaded at start and rewritten shortly after every change.
	StateFile string
	// TLSHosts are extra DNS names or IPs for the serving certificate.
	TLSHosts []string
	// NodesWithoutSkopeo are nodes where skopeo is not installed, so
	// oci-registry-pull fails there as PVE's does.
	NodesWithoutSkopeo []string
	// ConfigLockTimeout is how long a writer waits for a guest's config file lock held by
	// a create or clone task before failing with "got timeout"; default 10 s as PVE.
	ConfigLockTimeout time.Duration
	// NodeMemory sets nodes' memory figures (default 64 GiB, 8 GiB used);
	// SetNodeMemory changes them later.
	NodeMemory map[string]NodeMemory
	// Seed seeds the simulator's randomness (fault rule hits, ranged task run times); 0
	// picks one. Server.Seed reports it, so a failure under faults can be replayed.
	Seed uint64
}

// Server is a running simulated Proxmox VE cluster.
type Server struct {
	opts Options

	// mu guards st and every guest, storage and task in it.
	mu     sync.Mutex
	st     *state
	closed bool

	auth     *authStore
	counters *counterSet
	dice     *dice
	faults   *faultSet
	router   *router
	offline  offlineNodes
	memory   nodeMemoryTable

	ca      *certAuthority
	caPEM   []byte
	defCert *tls.Certificate
	cert    atomic.Pointer[tls.Certificate]
	// custom are the custom certificates uploaded per node: the files
	// pveproxy-ssl.pem/.key on that node. pveproxy serves one (cert) only
	// once it restarts.
	custom customCerts

	listeners []*listener
	workers   *proxyWorkers
	hs        *http.Server
	baseURL   string

	// gen counts state changes; cached answers built at an older gen are stale.
	gen       atomic.Uint64
	res       resourcesCache
	dirty     atomic.Bool
	persistWG sync.WaitGroup
	stopCh    chan struct{}
}

// Start creates the cluster and serves it over HTTPS with a freshly generated CA.
func Start(opts Options) (*Server, error) {
	opts = withDefaults(opts)
	ca, err := newCA()
	if err != nil {
		return nil, err
	}
	leaf, err := ca.issueServing(opts.TLSHosts...)
	if err != nil {
		return nil, err
	}
	dice := newDice(opts.Seed)
	s := &Server{
		opts:     opts,
		st:       newState(opts),
		auth:     newAuthStore(opts.TicketLifetime),
		counters: newCounterSet(opts.LogRequests),
		dice:     dice,
		faults:   newFaultSet(dice),
		router:   newRouter(routeTable()),
		ca:       ca,
		caPEM:    ca.pem,
		defCert:  leaf,
		stopCh:   make(chan struct{}),
	}
	s.cert.Store(leaf)
	for node, m := range opts.NodeMemory {
		s.memory.set(node, m)
	}
	if opts.StateFile != "" {
		if err := s.loadState(opts.StateFile); err != nil {
			return nil, err
		}
	}
	if err := s.listenAll(); err != nil {
		return nil, err
	}
	if opts.StateFile != "" {
		s.startPersister(opts.StateFile)
	}
	return s, nil
}

func withDefaults(o Options) Options {
	if len(o.Nodes) == 0 {
		o.Nodes = []string{"pve"}
	}
	if o.TicketLifetime == 0 {
		o.TicketLifetime = 2 * time.Hour
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	if o.TaskDurations == nil {
		o.TaskDurations = map[string]time.Duration{}
	}
	return o
}

// readHeaderTimeout bounds how long a connection may take to send a request head.
const readHeaderTimeout = 30 * time.Second

// hostForURL turns a listen address into a dialable host:port (0.0.0.0 becomes 127.0.0.1).
func hostForURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}

// URL is the server's base URL, e.g. "https://127.0.0.1:8006".
func (s *Server) URL() string { return s.baseURL }

// APIURL is the API base URL clients use: URL()+"/api2/json".
func (s *Server) APIURL() string { return s.baseURL + "/api2/json" }

// CAPEM is the PEM of the CA that signed the serving certificate (a caBundle).
func (s *Server) CAPEM() []byte { return append([]byte(nil), s.caPEM...) }

// Close stops serving, cancels running tasks and releases held responses.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.st.stopTimers()
	s.mu.Unlock()
	s.faults.clear()
	close(s.stopCh)
	_ = s.hs.Close()
	s.persistWG.Wait()
}

// ServeHTTP dispatches /api2/json calls and the /_sim/ admin API.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	escaped := hr.URL.EscapedPath()
	switch {
	case strings.HasPrefix(escaped, "/_sim/"):
		s.serveAdmin(w, hr)
	case escaped == "/api2/json" || strings.HasPrefix(escaped, "/api2/json/"):
		s.serveAPI(w, hr, strings.TrimPrefix(escaped, "/api2/json"))
	default:
		writeError(w, errf(http.StatusNotImplemented, "Method '%s %s' not implemented", hr.Method, hr.URL.Path))
	}
}

func unescapeSegments(rel string) []string {
	segs := splitPath(rel)
	for i, seg := range segs {
		if u, err := url.PathUnescape(seg); err == nil {
			segs[i] = u
		}
	}
	return segs
}

func (s *Server) serveAPI(w http.ResponseWriter, hr *http.Request, rel string) {
	segs := unescapeSegments(rel)
	relPath := "/" + strings.Join(segs, "/")
	method := hr.Method
	body, err := readBody(hr)
	if err != nil {
		writeError(w, err)
		return
	}
	if method == http.MethodDelete && len(body) > 0 {
		writeError(w, errf(http.StatusNotImplemented, "Unexpected content for method '%s'", method))
		return
	}
	var rt *route
	tn, vars := s.router.match(segs)
	if tn != nil {
		rt = tn.routes[method]
	}
	cred, err := s.authenticate(hr, method, rt, relPath)
	if err != nil {
		if isUnauthorized(err) {
			s.counters.reject(presentedSecret(hr), method, relPath)
		}
		s.failAuth(w, err)
		return
	}
	if rt == nil {
		writeError(w, errf(http.StatusNotImplemented, "Method '%s %s' not implemented", method, relPath))
		return
	}
	s.counters.count(rt.endpoint, cred, method, relPath)
	if s.unreachableNode(w, segs) {
		return
	}
	s.serveRoute(w, hr, rt, vars, body, cred, relPath)
}

// failAuth answers a failed authentication, delayed like pveproxy delays every 401.
func (s *Server) failAuth(w http.ResponseWriter, err error) {
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized && s.opts.AuthFailDelay > 0 {
		select {
		case <-time.After(s.opts.AuthFailDelay):
		case <-s.stopCh:
		}
	}
	writeError(w, err)
}

func (s *Server) serveRoute(w http.ResponseWriter, hr *http.Request, rt *route, vars map[string]string, body []byte, cred credential, relPath string) {
	fx := s.faults.match(hr.Method, relPath)
	if fx.latency > 0 {
		select {
		case <-time.After(fx.latency):
		case <-s.stopCh:
		}
	}
	if fx.err != nil {
		writeError(w, fx.err)
		return
	}
	data, restarts, err := s.invoke(hr, rt, vars, body, cred, fx.taskFault)
	defer releaseData(data)
	if restarts {
		s.restartProxy(w)
	}
	if fx.hold != nil {
		fx.hold.park(s.stopCh)
	}
	if fx.drop {
		dropConnection(w)
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeData(w, data)
}

// invoke decodes and validates parameters, then runs the handler under the state lock. It
// also reports whether the handler restarted pveproxy.
func (s *Server) invoke(hr *http.Request, rt *route, vars map[string]string, body []byte, cred credential, taskFault string) (any, bool, error) {
	raw, err := decodeParams(hr.Header.Get("Content-Type"), hr.URL.RawQuery, body)
	if err != nil {
		return nil, false, err
	}
	for k, v := range vars {
		raw[k] = v
	}
	params, errs := rt.params.validate(raw)
	if errs != nil {
		return nil, false, errParams(errs)
	}
	req := &request{method: hr.Method, template: rt.spec.Path, params: params, cred: cred, http: hr, taskFault: taskFault}
	if rt.unlocked {
		data, err := rt.handler(s, req)
		return data, req.restartsProxy, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, errf(http.StatusServiceUnavailable, "server closed")
	}
	data, err := rt.handler(s, req)
	if hr.Method != http.MethodGet {
		s.configChangedByID(params["vmid"])
		s.configChangedByID(params["newid"])
		s.markDirty()
	}
	return data, req.restartsProxy, err
}

// restartProxy is pveproxy's reload after a certificate change: the connection answering
// this request closes after the answer and every other connection accepted before now closes
// once it is idle, so every later request makes a new TLS connection and meets the
// certificate now served.
func (s *Server) restartProxy(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	s.workers.restart()
}

// dropConnection closes the client connection without writing a response.
func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // net/http aborts the connection without logging
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// markDirty records a state change, for the persister and for cached answers.
func (s *Server) markDirty() {
	s.gen.Add(1)
	s.dirty.Store(true)
}

// taskDuration is the configured run time of a task type, drawn from its
// range when it has one.
func (s *Server) taskDuration(typ string) time.Duration {
	d, ok := s.opts.TaskDurations[typ]
	if !ok {
		d = s.opts.TaskDurations[""]
	}
	if hi := s.opts.TaskDurationsMax[typ]; hi > d {
		d += time.Duration(s.dice.duration(int64(hi - d)))
	}
	return d
}
