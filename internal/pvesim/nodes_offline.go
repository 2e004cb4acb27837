package pvesim

import (
	"net/http"
	"sync"
)

// A cluster node can go offline while the others stay quorate. pveproxy on
// the node a client talks to then cannot proxy a /nodes/{node}/... request
// to the dead node's pveproxy: it answers 595 with AnyEvent::HTTP's reason
// ("No route to host" when the host is gone, "Connection refused" when only
// its pveproxy is) and an empty body. pmxcfs still lists the node and its
// guests, so /cluster/resources shows the node "offline" and its guests'
// status "unknown", without usage figures.

// offlineNodes are the nodes taken offline, with the reason phrase their
// 595 carries. Its own lock: serveAPI asks before taking Server.mu.
type offlineNodes struct {
	mu     sync.Mutex
	reason map[string]string
}

func (o *offlineNodes) get(node string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r, ok := o.reason[node]
	return r, ok
}

// Reason phrases of pveproxy's 595 for an unreachable node.
const (
	NodeNoRoute = "No route to host"
	NodeRefused = "Connection refused"
)

// SetNodeOffline takes node offline (reason is the 595's phrase, default
// NodeNoRoute), or brings it back with offline=false.
func (s *Server) SetNodeOffline(node string, offline bool, reason string) error {
	s.mu.Lock()
	err := s.checkNode(node)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if reason == "" {
		reason = NodeNoRoute
	}
	s.offline.mu.Lock()
	if s.offline.reason == nil {
		s.offline.reason = map[string]string{}
	}
	if offline {
		s.offline.reason[node] = reason
	} else {
		delete(s.offline.reason, node)
	}
	s.offline.mu.Unlock()
	s.markDirty() // the cached /cluster/resources shows the old status
	return nil
}

// nodeOffline is true while node is offline.
func (s *Server) nodeOffline(node string) bool {
	_, off := s.offline.get(node)
	return off
}

// unreachableNode answers a request for a path naming an offline node as
// pveproxy does: 595, the reason phrase, no body. false when the path
// names no offline node.
func (s *Server) unreachableNode(w http.ResponseWriter, segs []string) bool {
	if len(segs) < 2 || segs[0] != "nodes" {
		return false
	}
	reason, off := s.offline.get(segs[1])
	if !off {
		return false
	}
	setPVEHeaders(w)
	w.Header().Set(reasonHeader, reason)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(statusNodeUnreachable)
	return true
}

// statusNodeUnreachable is AnyEvent::HTTP's status for a failed connection,
// which pveproxy passes on.
const statusNodeUnreachable = 595

// offlineResource is a node row of an offline node: pmxcfs knows it, but
// has no current figures from it.
func offlineResource(e nodeEntry) nodeEntry {
	e.Status = "offline"
	e.CPU, e.Mem, e.Uptime, e.Disk = 0, 0, 0, 0
	return e
}

// unreachableGuest is a guest row of a guest on an offline node: its state
// is unknown.
func unreachableGuest(e guestEntry) guestEntry {
	e.Status = "unknown"
	e.CPU, e.Mem, e.Uptime = 0, 0, 0
	e.NetIn, e.NetOut, e.DiskRead, e.DiskWrite = 0, 0, 0, 0
	return e
}
