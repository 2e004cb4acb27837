package pvesim

import (
	"crypto/sha1" //nolint:gosec // PVE's config digest is SHA-1; it is an identifier, not security.
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Guest kinds.
const (
	KindQemu = "qemu"
	KindLXC  = "lxc"
)

// Guest power states.
const (
	StatusRunning = "running"
	StatusStopped = "stopped"
)

// state is the simulated cluster. Every field is guarded by Server.mu.
type state struct {
	nodes   []string
	nodeSet map[string]bool
	guests  map[int]*guest
	// storages maps node -> storage id -> storage; a shared storage is the same pointer on every node.
	storages map[string]map[string]*storage
	pools    map[string]*pool
	// bridges maps node -> its Linux bridges, in creation order.
	bridges map[string][]string
	// vnets are the cluster's applied SDN VNets by ID: a bridge on every node.
	vnets map[string]VNet
	// fileLocks are the config file locks tasks hold, by VMID.
	fileLocks map[int]*fileLock
	tasks     map[string]*task
	// taskLog keeps each node's tasks in start order.
	taskLog map[string][]*task
	pidSeq  int
	// baseline is what POST /_sim/reset restores.
	baseline *persistedState
}

// guest is a QEMU VM or an LXC container: its config file plus runtime state.
type guest struct {
	Kind string
	Node string
	VMID int
	// Config is the current (applied) config; "lock", "template", "parent" live here as in PVE.
	Config        map[string]string
	Pending       map[string]string
	PendingDelete map[string]bool
	Snapshots     []*snapshot
	Status        string
	Paused        bool
	StartedAt     time.Time
	// CIApplied holds the cloud-init keys as the cloud-init drive was last generated.
	CIApplied map[string]string
	Pool      string
	// HAManaged marks guests under HA; kept for the "ha" status field and the HA resources.
	HAManaged bool
	// HA holds the HA resource's options while HAManaged (see ha_resources.go).
	HA map[string]string

	rrd rrdState
	// lim and row cache what /cluster/resources shows; see resources_cache.go.
	lim   guestLimits
	row   encodedRow
	resID string
}

type snapshot struct {
	Name        string
	Description string
	SnapTime    int64
	VMState     bool
	Parent      string
	Config      map[string]string
	// SnapState is "prepare" while the snapshot task runs and "delete" while
	// the delete task does (or after it failed), as PVE keeps it.
	SnapState string `json:",omitempty"`
}

// storage is one storage on a node (or on all nodes, when shared).
type storage struct {
	ID      string
	Type    string
	Content []string
	Shared  bool
	Total   int64
	Path    string
	Volumes map[string]*volume
	// names counts volumes by disk name ("vm-100-disk-0") for free-name lookups.
	names map[string]int
}

type volume struct {
	VolID     string
	Format    string
	Size      int64
	VMID      int
	CTime     int64
	Content   string
	Parent    string
	Notes     string
	Protected bool
}

type pool struct {
	ID      string
	Comment string
	Storage []string
}

// rrdView is what /cluster/resources shows for a guest; it lags behind the live state.
type rrdView struct {
	Known     bool
	Status    string
	Name      string
	Template  bool
	StartedAt time.Time
}

type timedView struct {
	at   time.Time
	view rrdView
}

type rrdState struct {
	cur   rrdView
	queue []timedView
}

const (
	gib = int64(1) << 30
	mib = int64(1) << 20
)

func newState(opts Options) *state {
	st := &state{
		nodeSet:   map[string]bool{},
		guests:    map[int]*guest{},
		storages:  map[string]map[string]*storage{},
		pools:     map[string]*pool{},
		bridges:   map[string][]string{},
		vnets:     map[string]VNet{},
		fileLocks: map[int]*fileLock{},
		tasks:     map[string]*task{},
		taskLog:   map[string][]*task{},
	}
	var shared *storage
	if opts.SharedStorage != "" {
		shared = &storage{ID: opts.SharedStorage, Type: "nfs", Shared: true, Total: 64 << 40, Path: "/mnt/pve/" + opts.SharedStorage,
			Content: []string{"images", "rootdir", "iso", "vztmpl", "snippets", "import", "backup"}, Volumes: map[string]*volume{}}
	}
	for _, n := range opts.Nodes {
		st.nodes = append(st.nodes, n)
		st.nodeSet[n] = true
		st.bridges[n] = []string{defaultBridge}
		st.storages[n] = map[string]*storage{
			"local": {ID: "local", Type: "dir", Total: 1 << 40, Path: "/var/lib/vz",
				Content: []string{"iso", "vztmpl", "snippets", "import", "backup"}, Volumes: map[string]*volume{}},
			"local-lvm": {ID: "local-lvm", Type: "lvmthin", Total: 16 << 40,
				Content: []string{"images", "rootdir"}, Volumes: map[string]*volume{}},
		}
		if shared != nil {
			st.storages[n][shared.ID] = shared
		}
	}
	return st
}

func (st *state) stopTimers() {
	for _, t := range st.tasks {
		if t.timer != nil {
			t.timer.Stop()
		}
	}
}

// storage looks a storage up on a node.
func (st *state) storage(node, id string) (*storage, bool) {
	s, ok := st.storages[node][id]
	return s, ok
}

// storageIDs lists a node's storages in a stable order.
func (st *state) storageIDs(node string) []string {
	return sortedKeys(st.storages[node])
}

func (s *storage) supports(content string) bool { return contains(s.Content, content) }

func (s *storage) used() int64 {
	var n int64
	for _, v := range s.Volumes {
		n += v.Size
	}
	return n
}

// confPath is the config file path PVE names in its errors.
func confPath(kind, node string, vmid int) string {
	dir := "qemu-server"
	if kind == KindLXC {
		dir = "lxc"
	}
	return fmt.Sprintf("nodes/%s/%s/%d.conf", node, dir, vmid)
}

func errNoConfig(kind, node string, vmid int) *apiError {
	return errInternal("Configuration file '%s' does not exist", confPath(kind, node, vmid))
}

// errNoNode is what pveproxy answers for a node that is not in the cluster.
func errNoNode(node string) *apiError {
	return errInternal("hostname lookup '%s' failed - failed to get address info for: %s: Name or service not known", node, node)
}

// checkNode fails for nodes outside the cluster.
func (s *Server) checkNode(node string) error {
	if !s.st.nodeSet[node] {
		return errNoNode(node)
	}
	return nil
}

// guestOn finds a guest of the given kind on the node, failing like PVE when its config
// file is not on that node.
func (s *Server) guestOn(kind, node string, vmid int) (*guest, error) {
	if err := s.checkNode(node); err != nil {
		return nil, err
	}
	g, ok := s.st.guests[vmid]
	if !ok || g.Kind != kind || g.Node != node {
		return nil, errNoConfig(kind, node, vmid)
	}
	return g, nil
}

func newGuest(kind, node string, vmid int) *guest {
	return &guest{Kind: kind, Node: node, VMID: vmid, Config: map[string]string{}, Pending: map[string]string{},
		PendingDelete: map[string]bool{}, Status: StatusStopped, CIApplied: map[string]string{}}
}

func (g *guest) lock() string     { return g.Config["lock"] }
func (g *guest) isTemplate() bool { return g.Config["template"] == "1" }
func (g *guest) running() bool    { return g.Status == StatusRunning }

// name is the guest's display name: "name" for VMs, "hostname" for containers.
func (g *guest) name() string {
	if g.Kind == KindLXC {
		return g.Config["hostname"]
	}
	return g.Config["name"]
}

// effectiveConfig is the config with pending changes applied (GET config's default).
func (g *guest) effectiveConfig() map[string]string {
	out := make(map[string]string, len(g.Config)+len(g.Pending))
	for k, v := range g.Config {
		if !g.PendingDelete[k] {
			out[k] = v
		}
	}
	for k, v := range g.Pending {
		out[k] = v
	}
	return out
}

// applyPending moves pending values into the config, as a VM start does.
func (g *guest) applyPending() {
	for k := range g.PendingDelete {
		delete(g.Config, k)
	}
	for k, v := range g.Pending {
		g.Config[k] = v
	}
	g.Pending = map[string]string{}
	g.PendingDelete = map[string]bool{}
}

func (g *guest) hasPending() bool { return len(g.Pending) > 0 || len(g.PendingDelete) > 0 }

// digest is the SHA-1 over the config file as this simulator would write it.
func (g *guest) digest() string {
	h := sha1.New() //nolint:gosec // see import
	writeSection := func(m map[string]string) {
		for _, k := range sortedKeys(m) {
			fmt.Fprintf(h, "%s: %s\n", k, m[k])
		}
	}
	writeSection(g.Config)
	if g.hasPending() {
		fmt.Fprint(h, "\n[PENDING]\n")
		writeSection(g.Pending)
		if len(g.PendingDelete) > 0 {
			fmt.Fprintf(h, "delete: %s\n", strings.Join(sortedKeys(g.PendingDelete), ","))
		}
	}
	for _, sn := range g.Snapshots {
		fmt.Fprintf(h, "\n[%s]\n", sn.Name)
		writeSection(sn.Config)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// liveView is what pvestatd would report for the guest right now.
func (g *guest) liveView() rrdView {
	return rrdView{Known: true, Status: g.Status, Name: g.name(), Template: g.isTemplate(), StartedAt: g.StartedAt}
}

// touch records a change of what /cluster/resources shows; it appears after the lag.
func (s *Server) touch(g *guest) {
	s.markDirty()
	g.lim.current = false
	v := g.liveView()
	if s.opts.ResourcesLag <= 0 {
		g.rrd.cur = v
		g.rrd.queue = nil
		return
	}
	g.rrd.queue = append(g.rrd.queue, timedView{at: time.Now().Add(s.opts.ResourcesLag), view: v})
}

// resourcesView is the lagged view of a guest at now.
func (g *guest) resourcesView(now time.Time) rrdView {
	i := 0
	for i < len(g.rrd.queue) && !g.rrd.queue[i].at.After(now) {
		g.rrd.cur = g.rrd.queue[i].view
		i++
	}
	if i > 0 {
		g.rrd.queue = append(g.rrd.queue[:0:0], g.rrd.queue[i:]...)
	}
	return g.rrd.cur
}

// addGuest registers a new guest; known=false makes it show "unknown" until the lag passes.
func (s *Server) addGuest(g *guest, known bool) {
	s.st.guests[g.VMID] = g
	s.guestSetChanged()
	if known {
		g.rrd.cur = g.liveView()
		s.markDirty()
		return
	}
	s.touch(g)
}

func (s *Server) removeGuest(g *guest) {
	delete(s.st.guests, g.VMID)
	s.guestSetChanged()
	s.markDirty()
}

// setStatus changes the power state and restarts the uptime clock.
func (s *Server) setStatus(g *guest, status string) {
	if status == StatusRunning && g.Status != StatusRunning {
		g.StartedAt = time.Now()
	}
	if status != StatusRunning {
		g.StartedAt = time.Time{}
	}
	g.Status = status
	s.touch(g)
}

func sortedInts(m map[int]*guest) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
