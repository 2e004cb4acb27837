package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Container creation: pve-container's create_vm (src/PVE/API2/LXC.pm) and its vzcreate worker.

// lxcCreateOnly are create parameters that never reach the config file.
var lxcCreateOnly = map[string]bool{
	"node": true, "vmid": true, "ostemplate": true, "password": true, "ssh-public-keys": true, "storage": true,
	"force": true, "restore": true, "pool": true, "ignore-unpack-errors": true, "bwlimit": true, "start": true,
	"unique": true, "ha-managed": true,
}

var reLXCBareSize = regexp.MustCompile(`^\d+(\.\d+)?$`)

func handleLXCCreate(s *Server, r *request) (any, error) {
	node, vmid := r.node(), r.vmid()
	if err := s.checkNode(node); err != nil {
		return nil, err
	}
	if g, ok := s.st.guests[vmid]; ok {
		return nil, lxcVMIDUsedErr(g)
	}
	if err := s.poolCheckParam(r); err != nil {
		return nil, err
	}
	if err := s.lxcCheckOSTemplateAccess(r); err != nil {
		return nil, err
	}
	mounts, err := s.lxcCreateMounts(node, r)
	if err != nil {
		return nil, err
	}
	g := newGuest(KindLXC, node, vmid)
	g.Config["lock"] = "create"
	s.addGuest(g, false)
	typ, emsg := "vzcreate", "unable to create CT"
	if r.bool("restore") {
		typ, emsg = "vzrestore", "unable to restore CT"
	}
	return s.startTask(r, taskDef{Type: typ, ID: strconv.Itoa(vmid), Node: node,
		// The worker runs inside lock_config: the new config's file lock is held to its end.
		FileLocks: []int{vmid},
		Begin: func(t *task) error {
			if err := s.lxcBuild(g, r, mounts, t); err != nil {
				return fmt.Errorf("%s %d - %s", emsg, vmid, err.Error())
			}
			return nil
		},
		Finish: func(*task) error { return s.lxcFinishCreate(g, r) },
		OnFail: func() { s.lxcDropGuest(g) },
	}), nil
}

// lxcCheckOSTemplateAccess is create_vm's synchronous check of the ostemplate
// (PVE::Storage::check_volume_access): the storage must exist and the volume name must
// say the expected content type (vztmpl, or backup for a restore). Whether the file is
// there is only found by the worker (lxcFindArchive).
func (s *Server) lxcCheckOSTemplateAccess(r *request) error {
	volid := r.str("ostemplate")
	stID, _, ok := splitVolID(volid)
	if !ok {
		// Not a volume ID: a path, which only root@pam itself may pass.
		if r.cred.TokenID != "" || r.cred.User != "root@pam" {
			return errInternal("%s", errOnlyRootPaths)
		}
		return nil
	}
	if _, ok := s.st.storage(r.node(), stID); !ok {
		return errInternal("storage '%s' does not exist", stID)
	}
	want := "vztmpl"
	if r.bool("restore") {
		want = "backup"
	}
	if c := contentOf(volid); c != want {
		return errInternal("unable to use volume %s - content type needs to be '%s'", volid, want)
	}
	return nil
}

// lxcFindArchive is restore_archive's abs_filesystem_path: a template that is not
// there fails the worker, after the mount points were allocated.
func (s *Server) lxcFindArchive(node, volid string) error {
	if _, ok := s.importSource(node, volid); !ok {
		return fmt.Errorf("can't find file '%s'", volid)
	}
	return nil
}

// lxcCreateMounts resolves rootfs and mpN (bare sizes use the default storage) and checks
// every storage holds container directories, before anything is reserved.
func (s *Server) lxcCreateMounts(node string, r *request) (map[string]string, error) {
	def := "local"
	if r.has("storage") {
		def = r.str("storage")
	}
	mounts := map[string]string{}
	for k, v := range r.params {
		if !isLXCDiskKey(k) {
			continue
		}
		if reLXCBareSize.MatchString(v) {
			v = def + ":" + v
		}
		mounts[k] = v
	}
	if len(mounts) > 0 && mounts["rootfs"] == "" {
		return nil, errInternal("mount points configured, but 'rootfs' not set - aborting")
	}
	if len(mounts) == 0 {
		mounts["rootfs"] = def + ":4"
	}
	for _, k := range sortedKeys(mounts) {
		vol, _ := driveVolume(mounts[k])
		stID, _, ok := splitVolID(vol)
		if !ok {
			continue
		}
		st, found := s.st.storage(node, stID)
		if !found {
			return nil, errInternal("storage '%s' does not exist", stID)
		}
		if !st.supports("rootdir") {
			return nil, errParam("storage", fmt.Sprintf("storage '%s' does not support container directories", stID))
		}
	}
	return mounts, nil
}

// lxcBuild allocates the mounts and writes the config while the lock stays "create".
func (s *Server) lxcBuild(g *guest, r *request, mounts map[string]string, t *task) error {
	for _, k := range sortedKeys(mounts) {
		v, err := s.allocDrive(g, k, mounts[k])
		if err != nil {
			return err
		}
		g.Config[k] = v
		t.logf("allocated %s: %s", k, v)
	}
	for k, v := range r.params {
		if lxcCreateOnly[k] || isLXCDiskKey(k) || strings.HasPrefix(k, "unused") {
			continue
		}
		g.Config[k] = v
	}
	normalizeLXCNets(g.Config, g.VMID)
	lxcSetDefault(g.Config, "hostname", fmt.Sprintf("CT%d", g.VMID))
	lxcSetDefault(g.Config, "memory", "512")
	lxcSetDefault(g.Config, "swap", "512")
	lxcSetDefault(g.Config, "arch", "amd64")
	lxcSetDefault(g.Config, "ostype", lxcOSTypeOf(r.str("ostemplate")))
	// PVE creates unprivileged containers unless told otherwise; 0 is the default and not written.
	if g.Config["unprivileged"] == "0" {
		delete(g.Config, "unprivileged")
	} else {
		g.Config["unprivileged"] = "1"
	}
	if err := s.lxcFindArchive(g.Node, r.str("ostemplate")); err != nil {
		return err
	}
	t.logf("extracting archive '%s'", r.str("ostemplate"))
	return nil
}

func (s *Server) lxcFinishCreate(g *guest, r *request) error {
	delete(g.Config, "lock")
	if r.has("pool") {
		s.poolSetGuest(g, r.str("pool"))
	}
	g.HAManaged = r.bool("ha-managed")
	if r.bool("start") {
		lxcApplyPending(g)
		s.setStatus(g, StatusRunning)
	}
	s.touch(g)
	return nil
}

// lxcDropGuest removes a guest whose creation failed, with the volumes it got so far.
func (s *Server) lxcDropGuest(g *guest) {
	s.freeGuestVolumes(g)
	if cur, ok := s.st.guests[g.VMID]; ok && cur == g {
		s.removeGuest(g)
	}
}

func lxcSetDefault(m map[string]string, k, v string) {
	if _, ok := m[k]; !ok && v != "" {
		m[k] = v
	}
}

// lxcOSTypeOf guesses the distribution from the template name, as PVE's setup code detects it.
func lxcOSTypeOf(volid string) string {
	name := strings.ToLower(volid)
	for _, d := range []string{"debian", "ubuntu", "alpine", "centos", "fedora", "archlinux", "devuan", "gentoo", "opensuse", "nixos"} {
		if strings.Contains(name, d) {
			return d
		}
	}
	if strings.Contains(name, "rocky") || strings.Contains(name, "alma") {
		return "centos"
	}
	return "unmanaged"
}

// normalizeLXCNets gives every container NIC a hwaddr and type=veth, written name first.
func normalizeLXCNets(cfg map[string]string, vmid int) { normalizeNICs(cfg, vmid, normalizeLXCNet) }

func normalizeLXCNet(v string, vmid, idx int) string {
	m, err := parsePropertyString(lxcNetFormat, v)
	if err != nil {
		return v
	}
	if m["hwaddr"] == "" {
		m["hwaddr"] = macFor(vmid, idx)
	}
	m["hwaddr"] = strings.ToUpper(m["hwaddr"])
	if m["type"] == "" {
		m["type"] = "veth"
	}
	name := m["name"]
	delete(m, "name")
	rest := formatPropertyString("", m)
	if name == "" {
		return rest
	}
	return "name=" + name + "," + rest
}
