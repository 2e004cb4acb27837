package pvesim

import (
	"strconv"
	"time"
)

// LXC containers as pve-container serves them under /nodes/{node}/lxc: the
// helpers every container endpoint shares, and destroy_vm (pve-container src/PVE/API2/LXC.pm).

// pLXCSnapname is a container snapshot's name, checked against pve-container's pattern.
func pLXCSnapname() ParamSpec { return pString("snapname").req().pattern(`[a-zA-Z][a-zA-Z0-9_\-]*`) }

func (s *Server) lxcGuest(r *request) (*guest, error) {
	return s.guestOn(KindLXC, r.node(), r.vmid())
}

// lxcCheckDigest fails a request whose digest no longer matches the config.
func lxcCheckDigest(g *guest, r *request) error {
	if r.has("digest") && r.str("digest") != g.digest() {
		return errInternal("detected modified configuration - file changed by other user? Try again.")
	}
	return nil
}

// lxcVMIDUsedErr is PVE::Cluster::check_vmid_unused's message.
func lxcVMIDUsedErr(g *guest) error {
	typ := "VM"
	if g.Kind == KindLXC {
		typ = "CT"
	}
	return errInternal("%s %d already exists on node '%s'", typ, g.VMID, g.Node)
}

func handleLXCDelete(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if g.Config["protection"] == "1" {
		return nil, errInternal("can't remove CT %d - protection mode enabled", g.VMID)
	}
	if err := checkLock(g, r); err != nil {
		return nil, err
	}
	if g.HAManaged && !r.bool("purge") {
		return nil, errInternal("unable to remove CT %d - used in HA resources and purge parameter not set.", g.VMID)
	}
	if g.running() && !r.bool("force") {
		return nil, errInternal("unable to destroy CT %d - container is running", g.VMID)
	}
	unreferenced := r.bool("destroy-unreferenced-disks")
	return s.startTask(r, taskDef{Type: "vzdestroy", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Begin: func(t *task) error {
			if g.running() {
				// A plain warn: it is only logged, the task still ends OK.
				t.logf("forced to stop CT %d before destroying!", g.VMID)
				s.setStatus(g, StatusStopped)
			}
			g.Config["lock"] = "destroyed"
			return nil
		},
		Finish: func(*task) error {
			s.freeGuestVolumes(g)
			if unreferenced {
				s.freeOwnedVolumes(g.Node, g.VMID)
			}
			s.removeGuest(g)
			return nil
		},
		OnFail: func() { delete(g.Config, "lock") },
	}), nil
}

func handleLXCList(s *Server, r *request) (any, error) {
	now := time.Now()
	return s.listGuests(r.node(), KindLXC, func(g *guest) map[string]any { return lxcStatus(g, now) })
}
