package pvesim

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// POST /nodes/{node}/qemu: the qmcreate task (qemu-server src/PVE/API2/Qemu.pm, create_vm).

// handleQemuCreate reserves the VMID at once with a config locked "create"; the qmcreate
// task allocates the disks, writes the config and unlocks it, or removes it on failure.
func handleQemuCreate(s *Server, r *request) (any, error) {
	node, vmid := r.node(), r.vmid()
	if err := s.checkNode(node); err != nil {
		return nil, err
	}
	if r.has("archive") {
		return nil, errf(http.StatusNotImplemented, "restore from archive is not supported by pvesim")
	}
	if g, exists := s.st.guests[vmid]; exists {
		return nil, errInternal("unable to create VM %d - VM %d already exists on node '%s'", vmid, vmid, g.Node)
	}
	if p := r.str("pool"); p != "" && s.st.pools[p] == nil {
		return nil, errInternal("pool '%s' does not exist", p)
	}
	ch, err := changeFrom(r, qemuParamTypes, append(append([]string{}, qemuControlParams...), qemuCreateOnlyParams...))
	if err != nil {
		return nil, err
	}
	if err := s.checkNewDiskStorages(node, ch.set); err != nil {
		return nil, err
	}
	if err := s.checkImportSources(r, ch.set); err != nil {
		return nil, err
	}
	g := newGuest(KindQemu, node, vmid)
	g.Config["lock"] = "create"
	g.Pool = r.str("pool")
	s.addGuest(g, false)
	start := r.bool("start")
	return s.startTask(r, taskDef{Type: "qmcreate", ID: strconv.Itoa(vmid), Node: node,
		// lock_config_full: the worker holds the new config's file lock to its end.
		FileLocks: []int{vmid},
		Finish: func(t *task) error {
			return dieWith(fmt.Sprintf("unable to create VM %d -", vmid), s.finishCreate(g, ch, start, t))
		},
		OnFail: func() { s.discardGuest(g) },
	}), nil
}

// checkNewDiskStorages is the storage part of qemu-server's check_storage_access, run
// before forking: a new disk ("local-lvm:32") needs a storage that exists and holds images.
func (s *Server) checkNewDiskStorages(node string, set map[string]string) error {
	for _, k := range sortedKeys(set) {
		if !isQemuDiskKey(k) || isCDROM(set[k]) {
			continue
		}
		vol, _ := driveVolume(set[k])
		m := reAllocSyntax.FindStringSubmatch(vol)
		if m == nil {
			continue
		}
		st, ok := s.st.storage(node, m[1])
		if !ok {
			return errInternal("storage '%s' does not exist", m[1])
		}
		if !st.supports("images") {
			// qemu-server API2/Qemu.pm $check_storage_access: raise_param_exc, a 400.
			return errParam("storage", fmt.Sprintf("storage '%s' does not support vm images", m[1]))
		}
	}
	return nil
}

func (s *Server) finishCreate(g *guest, ch configChange, start bool, t *task) error {
	if s.st.guests[g.VMID] != g {
		return errInternal("config file vanished")
	}
	set, err := s.prepareValues(g, ch.set)
	if err != nil {
		return err
	}
	for k, v := range set {
		if isQemuDiskKey(k) && !isCDROM(v) {
			t.logf("%s: successfully created disk '%s'", k, v)
		}
		g.Config[k] = v
	}
	if _, ok := g.Config["smbios1"]; !ok {
		g.Config["smbios1"] = "uuid=" + uuidFor(g.VMID)
	}
	if _, ok := g.Config["vmgenid"]; !ok {
		g.Config["vmgenid"] = uuidFor(g.VMID + 1000000000)
	}
	g.Config["meta"] = fmt.Sprintf("creation-qemu=9.2.0,ctime=%d", time.Now().Unix())
	delete(g.Config, "lock")
	g.CIApplied = ciKeys(g.Config)
	if g.Config["template"] == "1" {
		s.makeTemplate(g)
	}
	s.touch(g)
	if start && !g.isTemplate() {
		s.powerOn(g)
	}
	return nil
}

// discardGuest removes a guest that a failed task created, with its volumes.
func (s *Server) discardGuest(g *guest) {
	if s.st.guests[g.VMID] != g {
		return
	}
	s.freeGuestVolumes(g)
	s.removeGuest(g)
}

// qemuCreateOnlyParams are create parameters that are not config keys.
var qemuCreateOnlyParams = []string{"archive", "bwlimit", "live-restore", "pool", "start", "storage", "unique", "ha-managed"}

func qemuCreateParams() []ParamSpec {
	ps := append([]ParamSpec{pNode(), pVMID(), pString("archive"), pInt("bwlimit").min(0), pBool("live-restore"),
		pString("pool"), pBool("start"), pString("storage"), pBool("unique"), pBool("ha-managed")}, qemuConfigParams()...)
	return ps
}
