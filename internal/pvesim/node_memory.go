package pvesim

import (
	"net/http"
	"strings"
	"sync"
)

// NodeMemory is a node's memory as pvestatd reports it: Total is the
// host's RAM (maxmem in /cluster/resources, memory.total in the node's
// status), Used what the host uses (mem, memory.used). pve-manager's
// resources (PVE/API2/Cluster.pm, via PVE/API2Tools.pm extract_node_stats)
// shows maxmem for every node it has figures for, and mem only for a node
// that is online.
type NodeMemory struct {
	Total int64 `json:"total"`
	Used  int64 `json:"used"`
}

// defaultNodeMemory is every node's memory unless configured.
var defaultNodeMemory = NodeMemory{Total: nodeMemory, Used: 8 * gib}

// nodeMemoryTable holds each node's configured memory. Its own lock, like
// offlineNodes: the listings ask while holding Server.mu.
type nodeMemoryTable struct {
	mu sync.Mutex
	m  map[string]NodeMemory
}

func (t *nodeMemoryTable) get(node string) NodeMemory {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m, ok := t.m[node]; ok {
		return m
	}
	return defaultNodeMemory
}

func (t *nodeMemoryTable) set(node string, m NodeMemory) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]NodeMemory{}
	}
	t.m[node] = m
}

// SetNodeMemory sets a node's memory figures, as a host with that much RAM
// and that much in use would report them.
func (s *Server) SetNodeMemory(node string, m NodeMemory) error {
	s.mu.Lock()
	err := s.checkNode(node)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.memory.set(node, m)
	s.markDirty() // the cached /cluster/resources shows the old figures
	return nil
}

// nodeMemoryPath recognises PUT /_sim/nodes/{node}/memory.
func nodeMemoryPath(p, method string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/_sim/nodes/")
	node, found := strings.CutSuffix(rest, "/memory")
	if !ok || !found || method != http.MethodPut || node == "" || strings.Contains(node, "/") {
		return "", false
	}
	return node, true
}

// adminNodeMemory sets a node's memory from {"total": bytes, "used": bytes}.
func (s *Server) adminNodeMemory(hr *http.Request, node string) error {
	var m NodeMemory
	if err := decodeAdmin(hr, &m); err != nil {
		return err
	}
	if m.Total <= 0 || m.Used < 0 || m.Used > m.Total {
		return errf(http.StatusBadRequest, "memory: want 0 <= used <= total and total > 0")
	}
	return s.SetNodeMemory(node, m)
}
