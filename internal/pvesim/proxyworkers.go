package pvesim

import (
	"net"
	"net/http"
	"sync"
)

// proxyWorkers models pveproxy's workers across a restart (after a certificate change): the
// workers that accepted a connection before the restart finish the request they are serving
// and exit, closing their connections; connections accepted after it belong to new workers
// and are untouched. Tracking the generation per connection keeps a connection made right
// after the restart from being cut by it, which a timer closing every idle connection did.
type proxyWorkers struct {
	mu    sync.Mutex
	gen   uint64
	conns map[net.Conn]workerConn
}

// workerConn is one connection: the restart generation that accepted it and whether it is
// between requests.
type workerConn struct {
	gen  uint64
	idle bool
}

func newProxyWorkers() *proxyWorkers {
	return &proxyWorkers{conns: map[net.Conn]workerConn{}}
}

// track is the http.Server's ConnState hook.
func (p *proxyWorkers) track(c net.Conn, state http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch state {
	case http.StateNew:
		p.conns[c] = workerConn{gen: p.gen}
	case http.StateActive:
		wc := p.conns[c]
		wc.idle = false
		p.conns[c] = wc
	case http.StateIdle:
		wc := p.conns[c]
		if wc.gen < p.gen {
			delete(p.conns, c)
			_ = c.Close()
			return
		}
		wc.idle = true
		p.conns[c] = wc
	case http.StateHijacked, http.StateClosed:
		delete(p.conns, c)
	}
}

// restart starts a new generation and closes the older connections that are idle now; the
// busy ones close when their request is answered (track).
func (p *proxyWorkers) restart() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gen++
	for c, wc := range p.conns {
		if wc.idle {
			delete(p.conns, c)
			_ = c.Close()
		}
	}
}
