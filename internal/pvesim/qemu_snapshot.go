package pvesim

import (
	"strconv"
	"strings"
	"time"
)

// pQemuSnapname is a VM snapshot's name (its format is checked by checkSnapshotName).
func pQemuSnapname() ParamSpec { return pString("snapname").req() }

func handleQemuSnapshotList(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	return snapshotList(g), nil
}

// handleQemuSnapshotCreate refuses reserved names synchronously; everything else happens
// in the qmsnapshot task, which holds the "snapshot" lock while it runs.
func handleQemuSnapshotCreate(s *Server, r *request) (any, error) {
	name, err := snapName(r)
	if err != nil {
		return nil, err
	}
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	// qemu-server src/PVE/API2/Qemu.pm, snapshot: 'current' is reserved as sent, 'pending' in
	// any case, and both texts name the reserved word literally, not what was sent.
	switch {
	case name == "current":
		return nil, errInternal("unable to use snapshot name 'current' (reserved name)")
	case strings.EqualFold(name, "pending"):
		return nil, errInternal("unable to use snapshot name 'pending' (reserved name)")
	}
	return s.startTask(r, taskDef{Type: "qmsnapshot", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Begin: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			if err := checkLock(g, r); err != nil {
				return err
			}
			if g.isTemplate() {
				return errInternal("you can't take a snapshot if it's a template")
			}
			if g.findSnapshot(name) != nil {
				return errInternal("snapshot name '%s' already used", name)
			}
			g.Config["lock"] = "snapshot"
			s.prepareSnapshot(g, name, r.str("description"), r.bool("vmstate"))
			return nil
		},
		Finish: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			delete(g.Config, "lock")
			if sn := g.findSnapshot(name); sn != nil {
				sn.SnapState = ""
			}
			g.Config["parent"] = name
			s.touch(g)
			return nil
		},
		OnFail: func() {
			// PVE's snapshot_create deletes a snapshot that failed half-way.
			if sn := g.findSnapshot(name); sn != nil && sn.SnapState == snapStatePrepare {
				g.removeSnapshot(name)
			}
			s.unlockIf(g, "snapshot")
		},
	}), nil
}

// Snapshot states PVE keeps on a snapshot while a task works on it.
const (
	snapStatePrepare = "prepare"
	snapStateDelete  = "delete"
)

// prepareSnapshot is PVE's snapshot_prepare: the snapshot is in the config
// (and listed) from the task's start, with snapstate prepare, its time and
// the configuration it copies; the guest's parent moves only on commit.
func (s *Server) prepareSnapshot(g *guest, name, description string, vmstate bool) {
	cfg := copyMap(g.Config)
	delete(cfg, "parent")
	delete(cfg, "lock")
	sn := &snapshot{Name: name, Description: description, SnapTime: time.Now().Unix(),
		VMState: vmstate && g.running(), Parent: g.Config["parent"], Config: cfg, SnapState: snapStatePrepare}
	cfg["snaptime"] = strconv.FormatInt(sn.SnapTime, 10)
	g.Snapshots = append(g.Snapshots, sn)
	s.touch(g)
}

func handleQemuSnapshotIndex(s *Server, r *request) (any, error) {
	if _, err := s.qemuSnapshot(r); err != nil {
		return nil, err
	}
	return []map[string]string{{"rollback": "rollback"}, {"config": "config"}}, nil
}

// qemuSnapshot resolves {node}/{vmid}/snapshot/{snapname} to the VM's snapshot.
func (s *Server) qemuSnapshot(r *request) (*snapshot, error) {
	name, err := snapName(r)
	if err != nil {
		return nil, err
	}
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	return g.snapshotOf(name)
}

func handleQemuSnapshotConfigGet(s *Server, r *request) (any, error) {
	sn, err := s.qemuSnapshot(r)
	if err != nil {
		return nil, err
	}
	out := typedConfig(sn.Config, qemuParamTypes)
	out["description"] = sn.Description
	if sn.Parent != "" {
		out["parent"] = sn.Parent
	}
	return out, nil
}

func handleQemuSnapshotConfigPut(s *Server, r *request) (any, error) {
	sn, err := s.qemuSnapshot(r)
	if err != nil {
		return nil, err
	}
	if r.has("description") {
		sn.Description = r.str("description")
		s.markDirty()
	}
	return nil, nil
}

func handleQemuSnapshotDelete(s *Server, r *request) (any, error) {
	name, err := snapName(r)
	if err != nil {
		return nil, err
	}
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	return s.snapshotTask(r, g, "qmdelsnapshot", name, "snapshot-delete", func() error {
		if err := checkLock(g, r); err != nil {
			return err
		}
		// PVE marks the snapshot before removing its disks' snapshots; a
		// failed delete leaves the mark.
		if sn := g.findSnapshot(name); sn != nil {
			sn.SnapState = snapStateDelete
		}
		return nil
	},
		func() error {
			g.removeSnapshot(name)
			s.unlockIf(g, "snapshot-delete")
			return nil
		}), nil
}

func handleQemuRollback(s *Server, r *request) (any, error) {
	name, err := snapName(r)
	if err != nil {
		return nil, err
	}
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	return s.snapshotTask(r, g, "qmrollback", name, "rollback", func() error {
		// PVE refuses an incomplete snapshot before it looks at the lock.
		if sn := g.findSnapshot(name); sn != nil && sn.SnapState != "" {
			return errInternal("unable to rollback to incomplete snapshot (snapstate = %s)", sn.SnapState)
		}
		return checkLock(g, r)
	},
		func() error {
			sn, err := g.snapshotOf(name)
			if err != nil {
				return err
			}
			// PVE stops a running VM before it rolls back, and starts it again
			// from the saved RAM when the snapshot has some ("VMs will be
			// automatically started if the snapshot includes RAM").
			if g.running() {
				s.powerOff(g)
			}
			cfg := copyMap(sn.Config)
			delete(cfg, "snaptime")
			cfg["parent"] = name
			g.Config = cfg
			g.Pending, g.PendingDelete = map[string]string{}, map[string]bool{}
			s.touch(g)
			if r.bool("start") || sn.VMState {
				s.powerOn(g)
			}
			return nil
		}), nil
}
