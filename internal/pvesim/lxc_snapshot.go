package pvesim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Container snapshots, template conversion and interfaces.

func handleLXCSnapshotList(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	return snapshotList(g), nil
}

// Snapshot create, delete and rollback check only the name synchronously; everything
// else (lock, existence, the config itself) happens in the worker, as in pve-container
// (src/PVE/API2/LXC/Snapshot.pm), so it fails the task.
func handleLXCSnapshotCreate(s *Server, r *request) (any, error) {
	// Only 'current' and 'vzdump' are reserved, exactly as sent ('pending' is a QEMU
	// config section, not a container's).
	name := r.str("snapname")
	if name == "current" || name == "vzdump" {
		return nil, errInternal("unable to use snapshot name '%s' (reserved name)", name)
	}
	g, err := s.lxcGuestIfAny(r)
	if err != nil || g == nil {
		return s.lxcNoConfigTask(r, "vzsnapshot", err)
	}
	desc := r.str("description")
	return s.startTask(r, taskDef{Type: "vzsnapshot", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Begin: func(*task) error {
			if err := checkLock(g, r); err != nil {
				return err
			}
			if g.findSnapshot(name) != nil {
				return fmt.Errorf("snapshot name '%s' already used", name)
			}
			g.Config["lock"] = "snapshot"
			s.touch(g)
			return nil
		},
		Finish: func(*task) error {
			s.unlockIf(g, "snapshot")
			cfg := copyMap(g.Config)
			delete(cfg, "parent")
			g.Snapshots = append(g.Snapshots, &snapshot{Name: name, Description: desc, SnapTime: time.Now().Unix(),
				Parent: g.Config["parent"], Config: cfg})
			g.Config["parent"] = name
			s.touch(g)
			return nil
		},
		OnFail: func() { s.unlockIf(g, "snapshot") },
	}), nil
}

func handleLXCSnapshotDelete(s *Server, r *request) (any, error) {
	g, err := s.lxcGuestIfAny(r)
	if err != nil || g == nil {
		return s.lxcNoConfigTask(r, "vzdelsnapshot", err)
	}
	name := r.str("snapname")
	checkUnlessForced := func() error {
		if r.bool("force") {
			return nil
		}
		return checkLock(g, r)
	}
	return s.snapshotTask(r, g, "vzdelsnapshot", name, "snapshot-delete", checkUnlessForced, func() error {
		s.unlockIf(g, "snapshot-delete")
		g.removeSnapshot(name)
		s.touch(g)
		return nil
	}), nil
}

// handleLXCRollback stops a running container, restores the snapshot's config and starts
// it again when asked, all inside the vzrollback worker.
func handleLXCRollback(s *Server, r *request) (any, error) {
	g, err := s.lxcGuestIfAny(r)
	if err != nil || g == nil {
		return s.lxcNoConfigTask(r, "vzrollback", err)
	}
	name := r.str("snapname")
	start := r.bool("start")
	return s.snapshotTask(r, g, "vzrollback", name, "rollback", func() error { return checkLock(g, r) }, func() error {
		sn, err := g.snapshotOf(name)
		if err != nil {
			return err
		}
		if g.running() {
			s.setStatus(g, StatusStopped)
		}
		g.Config = copyMap(sn.Config)
		g.Config["parent"] = name
		g.Pending, g.PendingDelete = map[string]string{}, map[string]bool{}
		if start {
			s.setStatus(g, StatusRunning)
		}
		s.touch(g)
		return nil
	}), nil
}

// lxcNoConfigTask answers a request whose container has no config: err when the request
// itself failed, else the worker PVE forks, which fails in load_config.
func (s *Server) lxcNoConfigTask(r *request, typ string, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	node, vmid := r.node(), r.vmid()
	return s.startTask(r, taskDef{Type: typ, ID: strconv.Itoa(vmid), Node: node,
		Begin: func(*task) error { return errNoConfig(KindLXC, node, vmid) }}), nil
}

func handleLXCSnapshotConfigGet(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	sn, err := g.snapshotOf(r.str("snapname"))
	if err != nil {
		return nil, err
	}
	out := lxcConfigData(sn.Config, g.digest())
	delete(out, "digest")
	out["snaptime"] = sn.SnapTime
	if sn.Description != "" {
		out["description"] = sn.Description
	}
	if sn.Parent != "" {
		out["parent"] = sn.Parent
	}
	return out, nil
}

func handleLXCSnapshotConfigPut(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if !r.has("description") {
		return nil, nil
	}
	if err := checkLock(g, r); err != nil {
		return nil, err
	}
	sn, err := g.snapshotOf(r.str("snapname"))
	if err != nil {
		return nil, err
	}
	sn.Description = r.str("description")
	s.markDirty()
	return nil, nil
}

// handleLXCTemplate forks a vztemplate worker but answers null, as pve-container does: the
// client never sees the UPID and has to poll the config for template: 1.
func handleLXCTemplate(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if err := checkLock(g, r); err != nil {
		return nil, err
	}
	if len(g.Snapshots) > 0 {
		return nil, errInternal("unable to create template, because CT contains snapshots")
	}
	if g.isTemplate() {
		return nil, errInternal("you can't convert a template to a template")
	}
	if g.running() {
		return nil, errInternal("you can't convert a CT to template if the CT is running")
	}
	s.startTask(r, taskDef{Type: "vztemplate", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Finish: func(*task) error {
			s.makeTemplate(g)
			s.touch(g)
			return nil
		},
	})
	return nil, nil
}

// handleLXCInterfaces lists a running container's interfaces, loopback first. PVE's
// get_interfaces returns nothing (data null) when lxc-info finds no PID: a stopped
// container, or one that is not there.
func handleLXCInterfaces(s *Server, r *request) (any, error) {
	g, err := s.lxcGuestIfAny(r)
	if err != nil || g == nil || !g.running() {
		return nil, err
	}
	out := []map[string]any{lxcInterface("lo", "00:00:00:00:00:00", "127.0.0.1/8", "::1/128")}
	for _, k := range sortedKeys(g.Config) {
		base, idx, ok := splitIndexed(k)
		if !ok || base != "net" {
			continue
		}
		m, err := parsePropertyString(lxcNetFormat, g.Config[k])
		if err != nil {
			continue
		}
		name, hw := m["name"], m["hwaddr"]
		if name == "" {
			name = "eth" + strconv.Itoa(idx)
		}
		if hw == "" {
			hw = macFor(g.VMID, idx)
		}
		out = append(out, lxcInterface(name, hw, lxcIPv4(m["ip"], g.VMID, idx), lxcIPv6(m["ip6"], g.VMID, idx)))
	}
	return out, nil
}

func lxcInterface(name, hw, inet, inet6 string) map[string]any {
	addrs := []map[string]any{}
	add := func(cidr, typ string) {
		if cidr == "" {
			return
		}
		ip, prefix, _ := strings.Cut(cidr, "/")
		addrs = append(addrs, map[string]any{"ip-address": ip, "ip-address-type": typ, "prefix": atoiDefault(prefix, 0)})
	}
	add(inet, "inet")
	add(inet6, "inet6")
	m := map[string]any{"name": name, "hwaddr": hw, "hardware-address": hw, "ip-addresses": addrs}
	if inet != "" {
		m["inet"] = inet
	}
	if inet6 != "" {
		m["inet6"] = inet6
	}
	return m
}

// lxcIPv4 is the configured static address, or a deterministic lease for
// dhcp: the VMID's two low bytes, as a VM's agent reports, so every guest
// below VMID 65536 has its own address.
func lxcIPv4(ip string, vmid, idx int) string {
	switch ip {
	case "", "manual":
		return ""
	case "dhcp":
		return fmt.Sprintf("10.%d.%d.%d/24", 10+idx, (vmid>>8)&0xff, vmid&0xff)
	}
	return ip
}

func lxcIPv6(ip string, vmid, idx int) string {
	switch ip {
	case "", "manual":
		return fmt.Sprintf("fe80::be24:11ff:fe%02x:%02x%02x/64", (vmid>>8)&0xff, vmid&0xff, idx)
	case "dhcp", "auto":
		return fmt.Sprintf("fd00:%x::%x/64", idx, vmid)
	}
	return ip
}
