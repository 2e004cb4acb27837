package pvesim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The cluster's own routes under /cluster: resources, nextid and status (pve-manager
// PVE/API2/Cluster.pm).

// guestEntry is a guest's /cluster/resources row. Typed rows rather than maps keep the
// 1,000-guest listing cheap to build and encode.
type guestEntry struct {
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	VMID      int     `json:"vmid"`
	Node      string  `json:"node"`
	Name      string  `json:"name,omitempty"`
	Status    string  `json:"status"`
	Template  int     `json:"template"`
	Lock      string  `json:"lock,omitempty"`
	Tags      string  `json:"tags,omitempty"`
	Pool      string  `json:"pool,omitempty"`
	HAState   string  `json:"hastate,omitempty"`
	MaxCPU    int     `json:"maxcpu"`
	CPU       float64 `json:"cpu"`
	MaxMem    int64   `json:"maxmem"`
	Mem       int64   `json:"mem"`
	MaxDisk   int64   `json:"maxdisk"`
	Disk      int64   `json:"disk"`
	Uptime    int64   `json:"uptime"`
	NetIn     int64   `json:"netin"`
	NetOut    int64   `json:"netout"`
	DiskRead  int64   `json:"diskread"`
	DiskWrite int64   `json:"diskwrite"`
}

type nodeEntry struct {
	ID         string  `json:"id"`
	Type       string  `json:"type"`
	Node       string  `json:"node"`
	Status     string  `json:"status"`
	Level      string  `json:"level"`
	CGroupMode int     `json:"cgroup-mode"`
	MaxCPU     int     `json:"maxcpu"`
	CPU        float64 `json:"cpu"`
	MaxMem     int64   `json:"maxmem"`
	Mem        int64   `json:"mem"`
	MaxDisk    int64   `json:"maxdisk"`
	Disk       int64   `json:"disk"`
	Uptime     int64   `json:"uptime"`
}

type storageEntry struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Storage    string `json:"storage"`
	Node       string `json:"node"`
	Status     string `json:"status"`
	Content    string `json:"content"`
	PluginType string `json:"plugintype"`
	Shared     int    `json:"shared"`
	Disk       int64  `json:"disk"`
	MaxDisk    int64  `json:"maxdisk"`
}

type poolResourceEntry struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Pool string `json:"pool"`
}

// handleClusterResources lists guests, nodes, storages and pools. Guest status, name,
// uptime and template come from the lagging pvestatd view; lock, tags, node and pool are live.
func handleClusterResources(s *Server, r *request) (any, error) {
	return s.cachedResources(r.str("type"), time.Now()), nil
}

func guestResource(g *guest, now time.Time, limitsEpoch uint64) guestEntry {
	v := g.resourcesView(now)
	lim := g.limits(limitsEpoch)
	e := guestEntry{
		ID: g.resourceID(), Type: g.Kind, VMID: g.VMID, Node: g.Node, Status: "unknown",
		MaxCPU: lim.cpus, MaxMem: lim.mem, MaxDisk: lim.disk,
		Template: boolNum(v.Template), Lock: g.lock(), Tags: g.Config["tags"], Pool: g.Pool,
	}
	if v.Known {
		e.Status, e.Name = v.Status, v.Name
		if showsUptime(v) {
			e.Uptime = int64(now.Sub(v.StartedAt).Seconds())
			e.Mem = e.MaxMem / 4
			e.CPU = 0.01
		}
	}
	if g.HAManaged {
		e.HAState = haState(g)
	}
	return e
}

// resourceID is the guest's /cluster/resources id, "qemu/100"; kind and VMID never change.
func (g *guest) resourceID() string {
	if g.resID == "" {
		g.resID = g.Kind + "/" + strconv.Itoa(g.VMID)
	}
	return g.resID
}

// showsUptime tells whether the listing shows a running guest's uptime for this view.
func showsUptime(v rrdView) bool {
	return v.Known && v.Status == StatusRunning && !v.StartedAt.IsZero()
}

func nodeResource(n string, m NodeMemory) nodeEntry {
	return nodeEntry{ID: "node/" + n, Type: "node", Node: n, Status: "online", CGroupMode: 2,
		MaxCPU: nodeCPUs, CPU: 0.02, MaxMem: m.Total, Mem: m.Used, MaxDisk: 100 * gib, Disk: 10 * gib, Uptime: nodeUptime}
}

func storageResource(node string, st *storage) storageEntry {
	return storageEntry{ID: "storage/" + node + "/" + st.ID, Type: "storage", Storage: st.ID, Node: node,
		Status: "available", Content: strings.Join(st.Content, ","), PluginType: st.Type,
		Shared: boolNum(st.Shared), Disk: st.used(), MaxDisk: st.Total}
}

// handleNextID returns the lowest free VMID as a string, as PVE's Perl does on the wire.
func handleNextID(s *Server, r *request) (any, error) {
	if r.has("vmid") {
		id := r.int("vmid")
		if _, taken := s.st.guests[id]; taken {
			return nil, errParam("vmid", fmt.Sprintf("VM %d already exists", id))
		}
		return strconv.Itoa(id), nil
	}
	for id := 100; id <= 1000000; id++ {
		if _, taken := s.st.guests[id]; !taken {
			return strconv.Itoa(id), nil
		}
	}
	return nil, errInternal("unable to get any free VMID in range [100, 1000000]")
}

// handleClusterStatus returns numbers for its booleans: go-proxmox type-asserts float64.
func handleClusterStatus(s *Server, _ *request) (any, error) {
	out := []map[string]any{}
	if len(s.st.nodes) > 1 {
		out = append(out, map[string]any{"type": "cluster", "id": "cluster", "name": "pvesim", "nodes": len(s.st.nodes), "quorate": 1, "version": len(s.st.nodes)})
	}
	for i, n := range s.st.nodes {
		out = append(out, map[string]any{
			"type": "node", "id": "node/" + n, "name": n, "ip": fmt.Sprintf("127.0.0.%d", i+1),
			"local": boolNum(i == 0), "nodeid": i + 1, "online": boolNum(!s.nodeOffline(n)), "level": "",
		})
	}
	return out, nil
}
