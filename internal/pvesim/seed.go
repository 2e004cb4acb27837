package pvesim

import (
	"fmt"
	"net/http"
	"time"
)

// GuestSeed describes a guest to add behind the API (tests, demo, drift).
type GuestSeed struct {
	Kind     string            `json:"kind"` // "qemu" (default) | "lxc"
	Node     string            `json:"node"`
	VMID     int               `json:"vmid"`
	Config   map[string]string `json:"config,omitempty"`
	Running  bool              `json:"running,omitempty"`
	Template bool              `json:"template,omitempty"`
	// Pool the guest is a member of.
	Pool string `json:"pool,omitempty"`
	// HAManaged puts the guest under HA (ha-manager add vm:<vmid>).
	HAManaged bool `json:"haManaged,omitempty"`
}

// GuestView is a copy of a guest's state.
type GuestView struct {
	Kind          string            `json:"kind"`
	Node          string            `json:"node"`
	VMID          int               `json:"vmid"`
	Config        map[string]string `json:"config"` // current (applied) values
	Pending       map[string]string `json:"pending,omitempty"`
	PendingDelete []string          `json:"pendingDelete,omitempty"`
	Status        string            `json:"status"` // "running" | "stopped"
	Lock          string            `json:"lock,omitempty"`
	Template      bool              `json:"template,omitempty"`
	Snapshots     []string          `json:"snapshots,omitempty"`
	Pool          string            `json:"pool,omitempty"`
}

// AddGuest creates a guest directly; disks in allocation syntax ("local-lvm:8") are allocated.
func (s *Server) AddGuest(seed GuestSeed) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addSeed(seed)
}

func (s *Server) addSeed(seed GuestSeed) error {
	if seed.Kind == "" {
		seed.Kind = KindQemu
	}
	if seed.Kind != KindQemu && seed.Kind != KindLXC {
		return errf(http.StatusBadRequest, "unknown guest kind '%s'", seed.Kind)
	}
	if seed.Node == "" {
		seed.Node = s.st.nodes[0]
	}
	if err := s.checkNode(seed.Node); err != nil {
		return err
	}
	if seed.VMID < 100 || seed.VMID > 999999999 {
		return errf(http.StatusBadRequest, "invalid vmid %d", seed.VMID)
	}
	if _, exists := s.st.guests[seed.VMID]; exists {
		return errInternal("VM %d already exists", seed.VMID)
	}
	g := newGuest(seed.Kind, seed.Node, seed.VMID)
	for k, v := range seed.Config {
		g.Config[k] = v
	}
	for _, k := range driveKeys(g, g.Config) {
		nv, err := s.allocDrive(g, k, g.Config[k])
		if err != nil {
			return err
		}
		g.Config[k] = nv
	}
	if seed.Kind == KindQemu {
		normalizeNets(g.Config, g.VMID)
	}
	if seed.Template {
		s.makeTemplate(g)
	}
	g.CIApplied = ciKeys(g.Config)
	g.Pool = seed.Pool
	g.HAManaged = seed.HAManaged
	if seed.Running && !seed.Template {
		g.Status = StatusRunning
		g.StartedAt = time.Now().Add(-time.Minute)
	}
	s.addGuest(g, true)
	return nil
}

// AddTemplate adds a cloud-init-ready QEMU template with an 8 GiB scsi0 disk on the shared
// storage when configured, else on local-lvm.
func (s *Server) AddTemplate(node string, vmid int, name string) error {
	stID := "local-lvm"
	if s.opts.SharedStorage != "" {
		stID = s.opts.SharedStorage
	}
	return s.AddGuest(GuestSeed{Kind: KindQemu, Node: node, VMID: vmid, Template: true, Config: map[string]string{
		"name": name, "memory": "2048", "cores": "2", "sockets": "1", "cpu": "x86-64-v2-AES",
		"scsihw": "virtio-scsi-single", "scsi0": stID + ":8,discard=on,iothread=1,ssd=1",
		"ide2": stID + ":cloudinit", "net0": "virtio,bridge=vmbr0", "ostype": "l26", "agent": "1",
		"boot": "order=scsi0", "serial0": "socket", "vga": "serial0",
		"smbios1": fmt.Sprintf("uuid=%s", uuidFor(vmid)), "vmgenid": uuidFor(vmid + 1000000000),
		"meta": fmt.Sprintf("creation-qemu=9.2.0,ctime=%d", time.Now().Unix()),
	}})
}

// uuidFor is a stable UUID for seeded guests.
func uuidFor(n int) string {
	return fmt.Sprintf("5e1f0000-0000-4000-8000-%012x", n)
}

// Guest returns a copy of one guest.
func (s *Server) Guest(vmid int) (GuestView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.st.guests[vmid]
	if !ok {
		return GuestView{}, false
	}
	return viewOf(g), true
}

// Guests returns copies of all guests ordered by VMID.
func (s *Server) Guests() []GuestView {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]GuestView, 0, len(s.st.guests))
	for _, id := range sortedInts(s.st.guests) {
		out = append(out, viewOf(s.st.guests[id]))
	}
	return out
}

func viewOf(g *guest) GuestView {
	v := GuestView{Kind: g.Kind, Node: g.Node, VMID: g.VMID, Config: copyMap(g.Config), Status: g.Status,
		Lock: g.lock(), Template: g.isTemplate(), Pool: g.Pool}
	if len(g.Pending) > 0 {
		v.Pending = copyMap(g.Pending)
	}
	v.PendingDelete = sortedKeys(g.PendingDelete)
	if len(v.PendingDelete) == 0 {
		v.PendingDelete = nil
	}
	for _, sn := range g.Snapshots {
		v.Snapshots = append(v.Snapshots, sn.Name)
	}
	return v
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// SetGuestConfig changes a current config value behind the API's back; "" deletes the key.
func (s *Server) SetGuestConfig(vmid int, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.st.guests[vmid]
	if !ok {
		return errInternal("VM %d does not exist", vmid)
	}
	if value == "" {
		delete(g.Config, key)
	} else {
		g.Config[key] = value
	}
	s.touch(g)
	return nil
}

// SetGuestStatus powers a guest on or off behind the API's back.
func (s *Server) SetGuestStatus(vmid int, status string) error {
	if status != StatusRunning && status != StatusStopped {
		return errf(http.StatusBadRequest, "status must be running or stopped, not %q", status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.st.guests[vmid]
	if !ok {
		return errInternal("VM %d does not exist", vmid)
	}
	s.setStatus(g, status)
	return nil
}

// MigrateGuest moves a guest (and its local volumes) to another node behind the API's back.
func (s *Server) MigrateGuest(vmid int, node string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.st.guests[vmid]
	if !ok {
		return errInternal("VM %d does not exist", vmid)
	}
	if err := s.checkNode(node); err != nil {
		return err
	}
	s.moveVolumes(g, node)
	g.Node = node
	s.touch(g)
	return nil
}

// moveVolumes carries a guest's non-shared volumes to the same storage on another node.
func (s *Server) moveVolumes(g *guest, node string) {
	for _, k := range driveKeys(g, g.Config) {
		vol, _ := driveVolume(g.Config[k])
		st, v, ok := s.findVolume(g.Node, vol)
		if !ok || st.Shared {
			continue
		}
		if dst, ok := s.st.storage(node, st.ID); ok {
			st.removeVolume(vol)
			dst.addVolume(v)
		}
	}
}

// ManageHA puts an existing guest under HA (ha-manager add) or takes it out.
func (s *Server) ManageHA(vmid int, managed bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.st.guests[vmid]
	if !ok {
		return errInternal("VM %d does not exist", vmid)
	}
	g.HAManaged = managed
	s.touch(g)
	return nil
}
