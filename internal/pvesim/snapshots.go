package pvesim

import (
	"regexp"
	"strconv"
)

// Snapshot handling shared by QEMU VMs and LXC containers: both keep their snapshots as
// config sections with a parent chain, list them the same way and take the same locks.

// reConfigID is PVE's pve-configid format (PVE::JSONSchema::pve_verify_configid).
var reConfigID = regexp.MustCompile(`(?i)^[a-z][a-z0-9_-]+$`)

// snapshotNameMax is the maxLength of pve-snapshot-name.
const snapshotNameMax = 40

// checkSnapshotName is the schema check of a snapname parameter (format
// pve-configid, maxLength 40), which PVE makes before the handler runs: the
// format first, then the length.
func checkSnapshotName(name string) error {
	if !reConfigID.MatchString(name) {
		return errParam("snapname", "invalid format - invalid configuration ID '"+name+"'")
	}
	if len(name) > snapshotNameMax {
		return errParam("snapname", "value may only be "+strconv.Itoa(snapshotNameMax)+" characters long")
	}
	return nil
}

// snapName is the request's snapname once it passed the schema check.
func snapName(r *request) (string, error) {
	name := r.str("snapname")
	return name, checkSnapshotName(name)
}

func (g *guest) findSnapshot(name string) *snapshot {
	for _, sn := range g.Snapshots {
		if sn.Name == name {
			return sn
		}
	}
	return nil
}

// snapshotOf finds a snapshot named in a request, failing as PVE does when it is missing.
func (g *guest) snapshotOf(name string) (*snapshot, error) {
	sn := g.findSnapshot(name)
	if sn == nil {
		return nil, errInternal("snapshot '%s' does not exist", name)
	}
	return sn, nil
}

// snapshotList lists snapshots and always ends with PVE's "current" pseudo-entry. A VM's
// entries always carry vmstate, 0 or 1 (qemu-server src/PVE/API2/Qemu.pm, snapshot_list:
// `vmstate => $d->{vmstate} ? 1 : 0`); a container's never do (pve-container
// src/PVE/API2/LXC/Snapshot.pm, list).
func snapshotList(g *guest) []map[string]any {
	out := []map[string]any{}
	for _, sn := range g.Snapshots {
		item := map[string]any{"name": sn.Name, "description": sn.Description, "snaptime": sn.SnapTime}
		if g.Kind == KindQemu {
			item["vmstate"] = boolNum(sn.VMState)
		}
		if sn.Parent != "" {
			item["parent"] = sn.Parent
		}
		if sn.SnapState != "" {
			item["snapstate"] = sn.SnapState
		}
		out = append(out, item)
	}
	cur := map[string]any{"name": "current", "description": "You are here!", "running": boolNum(g.running()), "digest": g.digest()}
	if p := g.Config["parent"]; p != "" {
		cur["parent"] = p
	}
	return append(out, cur)
}

// removeSnapshot drops a snapshot and re-parents its children, as PVE's snapshot_delete.
func (g *guest) removeSnapshot(name string) {
	sn := g.findSnapshot(name)
	if sn == nil {
		return
	}
	kept := g.Snapshots[:0:0]
	for _, other := range g.Snapshots {
		if other == sn {
			continue
		}
		if other.Parent == name {
			other.Parent = sn.Parent
		}
		kept = append(kept, other)
	}
	g.Snapshots = kept
	if g.Config["parent"] == name {
		if sn.Parent != "" {
			g.Config["parent"] = sn.Parent
		} else {
			delete(g.Config, "parent")
		}
	}
}

// snapshotTask starts a snapshot delete or rollback worker. Its first step takes lock once
// the guest still exists, the snapshot does and checkLock passes; finish does the work;
// a failed task drops the lock again.
func (s *Server) snapshotTask(r *request, g *guest, typ, name, lock string, checkLock, finish func() error) string {
	return s.startTask(r, taskDef{Type: typ, ID: strconv.Itoa(g.VMID), Node: g.Node,
		Begin: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			return s.lockSnapshotStep(g, name, lock, checkLock)
		},
		Finish: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			return finish()
		},
		OnFail: func() { s.unlockIf(g, lock) },
	})
}

// lockSnapshotStep is the worker's first step of a snapshot delete or rollback: the
// snapshot must exist and checkLock must pass, then the task's lock is taken.
func (s *Server) lockSnapshotStep(g *guest, name, lock string, checkLock func() error) error {
	if _, err := g.snapshotOf(name); err != nil {
		return err
	}
	if err := checkLock(); err != nil {
		return err
	}
	g.Config["lock"] = lock
	s.touch(g)
	return nil
}

// stillThere fails a task whose guest was removed meanwhile.
func (s *Server) stillThere(g *guest) error {
	if s.st.guests[g.VMID] != g {
		return errNoConfig(g.Kind, g.Node, g.VMID)
	}
	return nil
}

// unlockIf removes a lock if it is still the one this operation set.
func (s *Server) unlockIf(g *guest, lock string) {
	if g.lock() == lock {
		delete(g.Config, "lock")
		s.touch(g)
	}
}
