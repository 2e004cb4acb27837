package pvesim

import (
	"fmt"
	"strconv"
	"strings"
)

// cloneOpts are the parameters of one clone.
type cloneOpts struct {
	newID       int
	target      string
	full        bool
	storage     string
	format      string
	name        string
	description string
	pool        string
	snapname    string
}

// cloneSkipKeys are source keys a clone does not copy.
var cloneSkipKeys = []string{"lock", "template", "parent", "vmgenid", "smbios1", "meta"}

// handleQemuClone checks only what PVE checks before forking (the source, the target node,
// that no config exists for newid) and returns a UPID. The qmclone task repeats the
// check, writes a placeholder config locked "clone", then copies the VM. A stopped source
// is only share-locked, so parallel clones of one template all proceed.
func handleQemuClone(s *Server, r *request) (any, error) {
	src, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	o := cloneOpts{newID: r.int("newid"), target: r.str("target"), storage: r.str("storage"), format: r.str("format"),
		name: r.str("name"), description: r.str("description"), pool: r.str("pool"), snapname: r.str("snapname")}
	o.full = !src.isTemplate() || r.bool("full")
	if err := s.checkClone(src, r, &o); err != nil {
		return nil, err
	}
	var created *guest
	return s.startTask(r, taskDef{Type: "qmclone", ID: strconv.Itoa(src.VMID), Node: src.Node,
		Begin: func(t *task) error {
			g, err := s.beginClone(src, r, o)
			created = g
			if err == nil {
				// Held to the task's end: the target's exclusively, the source's shared.
				s.holdFileLock(t, o.newID)
				s.holdFileLock(t, src.VMID)
			}
			return err
		},
		Finish: func(t *task) error { return dieWith("clone failed:", s.finishClone(src, created, o, t)) },
		OnFail: func() {
			if created != nil {
				s.discardGuest(created)
			}
		},
	}), nil
}

// checkClone is PVE's load_and_check: run before forking and again in the worker.
func (s *Server) checkClone(src *guest, r *request, o *cloneOpts) error {
	if o.newID == src.VMID {
		return errParam("newid", "unable to clone to the same VM")
	}
	if src.running() || src.lock() != "" {
		if err := checkLock(src, r); err != nil {
			return err
		}
	}
	if _, exists := s.st.guests[o.newID]; exists {
		return errInternal("unable to create VM %d: config file already exists", o.newID)
	}
	if o.snapname != "" && src.findSnapshot(o.snapname) == nil {
		return errInternal("snapshot '%s' does not exist", o.snapname)
	}
	if !o.full && (o.storage != "" || o.format != "") {
		return errInternal("parameter 'storage' not allowed for linked clones")
	}
	if o.pool != "" && s.st.pools[o.pool] == nil {
		return errInternal("pool '%s' does not exist", o.pool)
	}
	if o.storage != "" {
		if _, err := s.checkStorage(src.Node, o.storage, "images"); err != nil {
			return err
		}
	}
	if o.target != "" && o.target != src.Node {
		return s.checkCloneTarget(src, o)
	}
	return nil
}

// checkCloneTarget applies clone_vm's rules for a clone to another node
// (qemu-server src/PVE/API2/Qemu.pm clone_vm, load_and_check): a target
// storage must be enabled on the target node and shared ("can't clone to
// non-shared storage"), and, whatever the target storage, every volume of
// the source must be on shared storage ($check_storage_access_clone; "can't
// clone VM to node ... (VM uses local storage)").
func (s *Server) checkCloneTarget(src *guest, o *cloneOpts) error {
	if err := s.checkNode(o.target); err != nil {
		return err
	}
	if o.storage != "" {
		st, ok := s.st.storage(o.target, o.storage)
		if !ok {
			return errInternal("storage '%s' is not available on node '%s'", o.storage, o.target)
		}
		if !st.Shared {
			return errInternal("can't clone to non-shared storage '%s'", o.storage)
		}
	}
	if !s.volumesShared(src) {
		return errInternal("can't clone VM to node '%s' (VM uses local storage)", o.target)
	}
	return nil
}

// volumesShared reports whether every volume of g's drives is on shared
// storage, as $check_storage_access_clone judges: a CD-ROM counts when it
// holds a volume (an ISO, the cloud-init drive), not when it is empty
// ("none") or the host's drive ("cdrom"); unused volumes are not drives.
func (s *Server) volumesShared(g *guest) bool {
	for _, k := range driveKeys(g, g.Config) {
		vol, _ := driveVolume(g.Config[k])
		if strings.HasPrefix(k, "unused") || vol == "" || vol == "none" || vol == "cdrom" {
			continue
		}
		stID, _, ok := splitVolID(vol)
		if !ok {
			return false
		}
		st, ok := s.st.storage(g.Node, stID)
		if !ok || !st.Shared {
			return false
		}
	}
	return true
}

func (s *Server) beginClone(src *guest, r *request, o cloneOpts) (*guest, error) {
	if s.st.guests[src.VMID] != src {
		return nil, errNoConfig(KindQemu, src.Node, src.VMID)
	}
	if err := s.checkClone(src, r, &o); err != nil {
		return nil, err
	}
	g := newGuest(KindQemu, src.Node, o.newID)
	g.Config["lock"] = "clone"
	g.Config["description"] = " qmclone temporary file\n"
	s.addGuest(g, false)
	return g, nil
}

func (s *Server) finishClone(src, g *guest, o cloneOpts, t *task) error {
	if g == nil || s.st.guests[g.VMID] != g {
		return errInternal("unable to create VM %d: config file vanished", o.newID)
	}
	if s.st.guests[src.VMID] != src {
		return errNoConfig(KindQemu, src.Node, src.VMID)
	}
	srcCfg := src.Config
	if o.snapname != "" {
		sn := src.findSnapshot(o.snapname)
		if sn == nil {
			return errInternal("snapshot '%s' does not exist", o.snapname)
		}
		srcCfg = sn.Config
	}
	cfg := map[string]string{}
	for k, v := range srcCfg {
		if !contains(cloneSkipKeys, k) && !strings.HasPrefix(k, "unused") {
			cfg[k] = v
		}
	}
	for _, k := range driveKeys(src, cfg) {
		nv, err := s.cloneDrive(src, g, cfg[k], o)
		if err != nil {
			return err
		}
		cfg[k] = nv
		if !isCDROM(nv) {
			t.logf("create %s clone of drive %s (%s)", map[bool]string{true: "full", false: "linked"}[o.full], k, srcCfg[k])
		}
	}
	for k := range cfg {
		if keyPrefix, idx, ok := splitIndexed(k); ok && keyPrefix == "net" {
			cfg[k] = normalizeNet(netWithoutMAC(cfg[k]), g.VMID, idx)
		}
	}
	cfg["name"] = cloneName(src, o.name)
	delete(cfg, "description")
	if d, ok := srcCfg["description"]; ok {
		cfg["description"] = d
	}
	if o.description != "" {
		cfg["description"] = o.description
	}
	cfg["smbios1"] = "uuid=" + uuidFor(g.VMID)
	cfg["vmgenid"] = uuidFor(g.VMID + 1000000000)
	g.Config = cfg
	g.CIApplied = ciKeys(cfg)
	if o.pool != "" {
		g.Pool = o.pool
	}
	if o.target != "" && o.target != g.Node {
		g.Node = o.target
	}
	s.touch(g)
	return nil
}

// cloneName is the name asked for, else PVE's "Copy-of-VM-" and the source's name or VMID.
func cloneName(src *guest, name string) string {
	switch {
	case name != "":
		return name
	case src.name() != "":
		return "Copy-of-VM-" + src.name()
	}
	return fmt.Sprintf("Copy-of-VM-%d", src.VMID)
}

// netWithoutMAC drops the MAC of a NIC so that the clone gets its own.
func netWithoutMAC(v string) string {
	m, err := parsePropertyString(qemuNetFormat, v)
	if err != nil {
		return v
	}
	model := m["model"]
	delete(m, "model")
	delete(m, "macaddr")
	if rest := formatPropertyString("", m); rest != "" {
		return model + "," + rest
	}
	return model
}

// cloneDrive copies one drive: full clones get a new disk, linked clones a child of the
// base image; the cloud-init drive is recreated; CD-ROMs are shared.
func (s *Server) cloneDrive(src, g *guest, value string, o cloneOpts) (string, error) {
	vol, opts := driveVolume(value)
	if strings.Contains(vol, "cloudinit") {
		stID, _, _ := splitVolID(vol)
		v, err := s.allocNamed(src.Node, stID, g.VMID, fmt.Sprintf("vm-%d-cloudinit", g.VMID), 4*mib, "images")
		if err != nil {
			return "", err
		}
		return driveValue(v.VolID, opts), nil
	}
	if isCDROM(value) || strings.HasPrefix(vol, "/") {
		return value, nil
	}
	st, sv, ok := s.findVolume(src.Node, vol)
	if !ok {
		return "", errInternal("volume '%s' does not exist", vol)
	}
	if !o.full {
		_, name, _ := splitVolID(vol)
		base := name
		if i := strings.LastIndex(name, "/"); i >= 0 && st.Type != "lvmthin" {
			base = name[i+1:]
		}
		child := st.freeDiskName("vm", g.VMID)
		_, format := st.volumeName(g.VMID, child)
		childID := fmt.Sprintf("%s:%d/%s/%d/%s.qcow2", st.ID, src.VMID, base, g.VMID, child)
		if st.Type == "lvmthin" {
			childID = st.ID + ":" + base + "/" + child
		}
		st.addVolume(&volume{VolID: childID, Format: format, Size: sv.Size, VMID: g.VMID, CTime: sv.CTime, Content: "images", Parent: vol})
		return driveValue(childID, opts), nil
	}
	target := st.ID
	if o.storage != "" {
		target = o.storage
	}
	v, err := s.allocDisk(src.Node, target, g.VMID, sv.Size, "images")
	if err != nil {
		return "", err
	}
	return driveValue(v.VolID, opts), nil
}
