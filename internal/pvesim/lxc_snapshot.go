package pvesim

import (
	"fmt"
	"strconv"
	"time"
)

// Container snapshots under /nodes/{node}/lxc/{vmid}/snapshot.

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
