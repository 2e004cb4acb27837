package pvesim

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// A real cluster answers its API on every node's pveproxy, all serving the
// same cluster state. The simulator does the same with several listeners
// (Options.Listen plus Options.ExtraListen), one state behind them all, and
// can take a listener down (a node's pveproxy or its host gone: new
// connections are refused, open ones are cut) and bring it back on the same
// address.

// listener is one address the simulator serves on.
type listener struct {
	addr string // the bound address, kept to bind it again after a Down
	url  string

	mu    sync.Mutex
	ln    net.Listener // nil while down
	conns map[net.Conn]struct{}
}

// ListenerView is one listener as the admin API and tests see it.
type ListenerView struct {
	Index int    `json:"index"`
	URL   string `json:"url"`
	Up    bool   `json:"up"`
}

// listenAll binds every configured address; the first one is URL().
func (s *Server) listenAll() error {
	s.workers = newProxyWorkers()
	s.hs = &http.Server{Handler: s, ReadHeaderTimeout: readHeaderTimeout, ErrorLog: discardLogger(), ConnState: s.workers.track}
	for _, addr := range append([]string{s.opts.Listen}, s.opts.ExtraListen...) {
		l := &listener{addr: addr, conns: map[net.Conn]struct{}{}}
		if err := s.serveOn(l); err != nil {
			_ = s.hs.Close()
			return err
		}
		l.url = "https://" + hostForURL(l.addr)
		s.listeners = append(s.listeners, l)
	}
	s.baseURL = s.listeners[0].url
	return nil
}

// serveOn binds l's address and serves it; l.addr becomes the bound one,
// so a ":0" listener keeps its port across a Down and an Up.
func (s *Server) serveOn(l *listener) error {
	raw, err := net.Listen("tcp", l.addr)
	if err != nil {
		return errors.Wrapf(err, "cannot listen on %s", l.addr)
	}
	l.addr = raw.Addr().String()
	tlsCfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return s.cert.Load(), nil
		},
	}
	ln := reasonListener{tls.NewListener(&trackingListener{Listener: raw, l: l}, tlsCfg)}
	l.mu.Lock()
	l.ln = ln
	l.mu.Unlock()
	go func() { _ = s.hs.Serve(ln) }()
	return nil
}

// ListenerDown closes listener i (0 is URL()): connecting to it is refused
// and its open connections are cut, as when a node goes away.
func (s *Server) ListenerDown(i int) error {
	l, err := s.listener(i)
	if err != nil {
		return err
	}
	l.mu.Lock()
	ln := l.ln
	l.ln = nil
	open := make([]net.Conn, 0, len(l.conns))
	for c := range l.conns {
		open = append(open, c)
	}
	l.mu.Unlock()
	if ln == nil {
		return nil
	}
	_ = ln.Close()
	for _, c := range open {
		_ = c.Close()
	}
	return nil
}

// ListenerUp serves listener i again, on the address it had.
func (s *Server) ListenerUp(i int) error {
	l, err := s.listener(i)
	if err != nil {
		return err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return errf(http.StatusServiceUnavailable, "server closed")
	}
	l.mu.Lock()
	up := l.ln != nil
	l.mu.Unlock()
	if up {
		return nil
	}
	return s.serveOn(l)
}

// Listeners lists the listeners, URL() first.
func (s *Server) Listeners() []ListenerView {
	out := make([]ListenerView, len(s.listeners))
	for i, l := range s.listeners {
		l.mu.Lock()
		out[i] = ListenerView{Index: i, URL: l.url, Up: l.ln != nil}
		l.mu.Unlock()
	}
	return out
}

// URLs are the base URLs of every listener, URL() first.
func (s *Server) URLs() []string {
	out := make([]string, len(s.listeners))
	for i, l := range s.listeners {
		out[i] = l.url
	}
	return out
}

func (s *Server) listener(i int) (*listener, error) {
	if i < 0 || i >= len(s.listeners) {
		return nil, errf(http.StatusNotFound, "no listener %d (there are %d)", i, len(s.listeners))
	}
	return s.listeners[i], nil
}

// trackingListener remembers the connections it accepted, so that a Down
// can cut them.
type trackingListener struct {
	net.Listener
	l *listener
}

func (t *trackingListener) Accept() (net.Conn, error) {
	c, err := t.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: t.l}
	t.l.mu.Lock()
	t.l.conns[tc] = struct{}{}
	t.l.mu.Unlock()
	return tc, nil
}

type trackedConn struct {
	net.Conn
	l    *listener
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}
