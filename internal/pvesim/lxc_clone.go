package pvesim

import (
	"fmt"
	"strconv"
	"strings"
)

// Container clones: pve-container's clone_vm (src/PVE/API2/LXC.pm) and its vzclone worker.

// handleLXCClone follows pve-container: the request locks the source with 'disk' (so a
// second clone of the same container is refused until the first ends), writes the new
// config at once with lock 'create' and everything but the mount points, then the vzclone
// worker copies the volumes, unlocks both and moves the config to the target node.
func handleLXCClone(s *Server, r *request) (any, error) {
	src, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if err := s.poolCheckParam(r); err != nil {
		return nil, err
	}
	target := src.Node
	if r.has("target") {
		target = r.str("target")
		if err := s.checkNode(target); err != nil {
			return nil, err
		}
	}
	if err := s.lxcCheckCloneStorage(src, target, r); err != nil {
		return nil, err
	}
	if err := checkLock(src, r); err != nil {
		return nil, err
	}
	newid := r.int("newid")
	if g, ok := s.st.guests[newid]; ok {
		return nil, lxcVMIDUsedErr(g)
	}
	full := !src.isTemplate()
	if r.has("full") {
		full = r.bool("full")
	}
	cfg, err := s.lxcCloneSource(src, target, full, r)
	if err != nil {
		return nil, err
	}
	g := newGuest(KindLXC, src.Node, newid)
	for k, v := range cfg {
		if !isLXCDiskKey(k) {
			g.Config[k] = v
		}
	}
	g.Config["lock"] = "create"
	src.Config["lock"] = "disk"
	s.addGuest(g, false)
	s.touch(src)
	return s.startTask(r, taskDef{Type: "vzclone", ID: strconv.Itoa(src.VMID), Node: src.Node,
		Finish: func(t *task) error {
			if err := s.lxcCloneMounts(g, src, cfg, full, r, t); err != nil {
				return fmt.Errorf("clone failed: %s", err.Error())
			}
			s.lxcFinishClone(g, src, target, r)
			return nil
		},
		OnFail: func() {
			s.unlockIf(src, "disk")
			s.lxcDropGuest(g)
		},
	}), nil
}

// lxcCheckCloneStorage applies clone's storage rules: it must exist, and be shared to be
// used on another node.
func (s *Server) lxcCheckCloneStorage(src *guest, target string, r *request) error {
	if !r.has("storage") {
		return nil
	}
	st, ok := s.st.storage(src.Node, r.str("storage"))
	if !ok {
		return errInternal("storage '%s' does not exist", r.str("storage"))
	}
	if target != src.Node {
		if _, ok := s.st.storage(target, st.ID); !ok {
			return errInternal("storage '%s' is not available on node '%s'", st.ID, target)
		}
		if !st.Shared {
			return errInternal("can't clone to non-shared storage '%s'", st.ID)
		}
	}
	return nil
}

// lxcCloneSkip are source keys a clone never copies.
var lxcCloneSkip = map[string]bool{"lock": true, "template": true, "parent": true, "snapstate": true, "snaptime": true, "vmstate": true}

// lxcCloneSource builds the new config from the source (or its snapshot) with the checks
// pve-container makes before it forks the worker.
func (s *Server) lxcCloneSource(src *guest, target string, full bool, r *request) (map[string]string, error) {
	if r.has("storage") && !full {
		return nil, errInternal("parameter 'storage' not allowed for linked clones")
	}
	srcCfg := src.Config
	if r.has("snapname") {
		sn := src.findSnapshot(r.str("snapname"))
		if sn == nil {
			return nil, errInternal("snapshot '%s' does not exist", r.str("snapname"))
		}
		srcCfg = sn.Config
	}
	shared := true
	out := map[string]string{}
	for _, k := range sortedKeys(srcCfg) {
		if lxcCloneSkip[k] || strings.HasPrefix(k, "unused") {
			continue
		}
		v := srcCfg[k]
		if isLXCDiskKey(k) {
			mountShared, err := s.lxcCheckCloneMount(src, k, v, full, r)
			if err != nil {
				return nil, err
			}
			shared = shared && mountShared
		}
		if keyPrefix, idx, ok := splitIndexed(k); ok && keyPrefix == "net" {
			v = lxcRegenHWAddr(v, r.int("newid"), idx)
		}
		out[k] = v
	}
	if target != src.Node && !shared {
		return nil, errInternal("can't clone CT to node '%s' (CT uses local storage)", target)
	}
	if r.str("hostname") != "" {
		out["hostname"] = r.str("hostname")
	}
	if r.str("description") != "" {
		out["description"] = r.str("description")
	}
	return out, nil
}

// lxcCheckCloneMount makes pve-container's checks of mount point k (value v) before a
// clone and reports whether the storage its copy lands on is shared.
func (s *Server) lxcCheckCloneMount(src *guest, k, v string, full bool, r *request) (bool, error) {
	vol, _ := driveVolume(v)
	st, _, ok := s.findVolume(src.Node, vol)
	if !ok {
		return false, errInternal("unable to clone mountpoint '%s' (type bind)", k)
	}
	if r.has("storage") {
		st, _ = s.st.storage(src.Node, r.str("storage"))
	}
	if full && src.running() && !r.has("snapname") {
		return false, errInternal("Full clone of a running container is only possible from a snapshot")
	}
	return st != nil && st.Shared, nil
}

// lxcCloneMounts copies (full) or links every mount point into the new container.
func (s *Server) lxcCloneMounts(g, src *guest, cfg map[string]string, full bool, r *request, t *task) error {
	for _, k := range sortedKeys(cfg) {
		if !isLXCDiskKey(k) {
			continue
		}
		nv, err := s.lxcCloneMount(g, src, cfg[k], full, r)
		if err != nil {
			return err
		}
		if full {
			t.logf("create full clone of mountpoint %s (%s)", k, cfg[k])
		} else {
			t.logf("create linked clone of mount point %s (%s)", k, cfg[k])
		}
		g.Config[k] = nv
	}
	return nil
}

// lxcFinishClone unlocks source and clone, adds the pool and moves the config to the target.
func (s *Server) lxcFinishClone(g, src *guest, target string, r *request) {
	s.unlockIf(src, "disk")
	if r.has("pool") {
		s.poolSetGuest(g, r.str("pool"))
	}
	delete(g.Config, "lock")
	if target != g.Node {
		s.moveVolumes(g, target)
		g.Node = target
	}
	s.touch(g)
}

// lxcCloneMount copies one mount point's volume for the clone (a linked clone keeps the base
// image as parent).
func (s *Server) lxcCloneMount(g, src *guest, value string, full bool, r *request) (string, error) {
	vol, opts := driveVolume(value)
	st, sv, ok := s.findVolume(src.Node, vol)
	if !ok {
		return value, nil
	}
	stID := st.ID
	if full && r.has("storage") {
		stID = r.str("storage")
	}
	nv, err := s.allocDisk(g.Node, stID, g.VMID, sv.Size, "rootdir")
	if err != nil {
		return "", err
	}
	if !full {
		nv.Parent = vol
	}
	return driveValue(nv.VolID, opts), nil
}

// lxcRegenHWAddr gives a cloned NIC the new container's MAC.
func lxcRegenHWAddr(v string, vmid, idx int) string {
	m, err := parsePropertyString(lxcNetFormat, v)
	if err != nil {
		return v
	}
	m["hwaddr"] = ""
	delete(m, "hwaddr")
	name := m["name"]
	delete(m, "name")
	out := formatPropertyString("", m)
	if name != "" {
		out = "name=" + name + "," + out
	}
	return normalizeLXCNet(out, vmid, idx)
}
