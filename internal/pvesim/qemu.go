package pvesim

import "strconv"

// QEMU guests as qemu-server serves them under /nodes/{node}/qemu: the list, one VM's
// index, destroy_vm (qemu-server src/PVE/API2/Qemu.pm) and the lookups every VM endpoint shares.

// qemuGuest resolves {node}/{vmid} to a VM.
func (s *Server) qemuGuest(r *request) (*guest, error) {
	return s.guestOn(KindQemu, r.node(), r.vmid())
}

func handleQemuList(s *Server, r *request) (any, error) {
	return s.listGuests(r.node(), KindQemu, func(g *guest) map[string]any { return qemuStatusFields(g, false) })
}

func handleQemuIndex(s *Server, r *request) (any, error) {
	if _, err := s.qemuGuest(r); err != nil {
		return nil, err
	}
	out := []map[string]string{}
	for _, sub := range []string{"config", "pending", "status", "snapshot", "clone", "template", "resize", "cloudinit", "agent", "firewall", "rrd", "rrddata"} {
		out = append(out, map[string]string{"subdir": sub})
	}
	return out, nil
}

// handleQemuDestroy refuses running and protected VMs synchronously; the qmdestroy task
// removes the volumes and the config.
func handleQemuDestroy(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	if err := checkLock(g, r); err != nil {
		return nil, err
	}
	if g.running() {
		return nil, errInternal("VM %d is running - destroy failed", g.VMID)
	}
	if g.Config["protection"] == "1" {
		return nil, errInternal("can't remove VM %d - protection mode enabled", g.VMID)
	}
	if g.HAManaged && !r.bool("purge") {
		return nil, errInternal("unable to remove VM %d - used in HA resources and purge parameter not set.", g.VMID)
	}
	return s.startTask(r, taskDef{Type: "qmdestroy", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Finish: func(t *task) error {
			if s.st.guests[g.VMID] != g {
				return errNoConfig(KindQemu, g.Node, g.VMID)
			}
			if g.running() {
				return errInternal("VM %d is running - destroy failed", g.VMID)
			}
			if base, used := s.baseVolumeInUse(g); used {
				// qemu-server src/PVE/QemuServer.pm, destroy_vm: its text says "cloned" (sic),
				// and it dies before pve-storage's vdisk_free ("clones") is reached.
				return errInternal("base volume '%s' is still in use by linked cloned", base)
			}
			s.freeGuestVolumes(g)
			if r.bool("destroy-unreferenced-disks") {
				s.freeOwnedVolumes(g.Node, g.VMID)
			}
			s.removeGuest(g)
			t.logf("Removing image: 100%% complete...done.")
			return nil
		}}), nil
}

// freeOwnedVolumes deletes every image volume named after vmid on the node's storages.
func (s *Server) freeOwnedVolumes(node string, vmid int) {
	for _, id := range s.st.storageIDs(node) {
		st := s.st.storages[node][id]
		for volid, v := range st.Volumes {
			if v.VMID == vmid && (v.Content == "images" || v.Content == "rootdir") {
				st.removeVolume(volid)
			}
		}
	}
}

// baseVolumeInUse names a base volume of g that a linked clone's volume
// still has as its parent: pve-storage's vdisk_free refuses to remove it
// (LVM-thin would allow it, so PVE checks first), and the destroy task
// fails.
func (s *Server) baseVolumeInUse(g *guest) (string, bool) {
	bases := map[string]bool{}
	for _, k := range driveKeys(g, g.Config) {
		if vol, _ := driveVolume(g.Config[k]); vol != "" {
			bases[vol] = true
		}
	}
	for _, id := range s.st.storageIDs(g.Node) {
		for _, v := range s.st.storages[g.Node][id].Volumes {
			if v.Parent != "" && bases[v.Parent] && v.VMID != g.VMID {
				return v.Parent, true
			}
		}
	}
	return "", false
}
