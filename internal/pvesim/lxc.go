package pvesim

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// LXC containers as pve-container serves them under /nodes/{node}/lxc.

func registerLXCRoutes(r *router) {
	base := "/nodes/{node}/lxc"
	vm := base + "/{vmid}"
	nv := func(extra ...ParamSpec) []ParamSpec { return append([]ParamSpec{pNode(), pVMID()}, extra...) }
	snap := pString("snapname").req().pattern(`[a-zA-Z][a-zA-Z0-9_\-]*`)
	r.handle(RouteSpec{Method: http.MethodGet, Path: base, Params: []ParamSpec{pNode()}}, handleLXCList)
	r.handle(RouteSpec{Method: http.MethodPost, Path: base, Params: lxcCreateParams()}, handleLXCCreate)
	r.handle(RouteSpec{Method: http.MethodDelete, Path: vm, Params: nv(pBool("destroy-unreferenced-disks"), pBool("force"), pBool("purge"))}, handleLXCDelete)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/config", Params: nv(pBool("current"), pString("snapshot"))}, handleLXCConfigGet)
	r.handle(RouteSpec{Method: http.MethodPut, Path: vm + "/config", Params: lxcUpdateParams()}, handleLXCConfigPut)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/pending", Params: nv()}, handleLXCPending)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/clone", Params: nv(
		pInt("newid").req().min(100).max(999999999), pNumber("bwlimit").min(0), pString("description"), pBool("full"),
		pString("hostname"), pString("pool"), pString("snapname"), pString("storage"), lxcOptionalNode("target"),
	)}, handleLXCClone)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/status/current", Params: nv()}, handleLXCStatus)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/status/start", Params: nv(pBool("debug"), pBool("skiplock"))}, handleLXCStart)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/status/stop", Params: nv(pBool("overrule-shutdown"), pBool("skiplock"))}, handleLXCStop)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/status/shutdown", Params: nv(pBool("forceStop"), pInt("timeout").min(0))}, handleLXCShutdown)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/status/reboot", Params: nv(pInt("timeout").min(0))}, handleLXCReboot)
	r.handle(RouteSpec{Method: http.MethodPut, Path: vm + "/resize", Params: nv(
		ParamSpec{Name: "disk", Type: TypeString, Required: true, Enum: lxcDiskEnum()},
		pString("size").req().pattern(`\+?\d+(\.\d+)?[KMGT]?`), pString("digest"),
	)}, handleLXCResize)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/snapshot", Params: nv()}, handleLXCSnapshotList)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/snapshot", Params: nv(snap, pString("description"))}, handleLXCSnapshotCreate)
	r.handle(RouteSpec{Method: http.MethodDelete, Path: vm + "/snapshot/{snapname}", Params: nv(snap, pBool("force"))}, handleLXCSnapshotDelete)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/snapshot/{snapname}/rollback", Params: nv(snap, pBool("start"))}, handleLXCRollback)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/snapshot/{snapname}/config", Params: nv(snap)}, handleLXCSnapshotConfigGet)
	r.handle(RouteSpec{Method: http.MethodPut, Path: vm + "/snapshot/{snapname}/config", Params: nv(snap, pString("description"))}, handleLXCSnapshotConfigPut)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/template", Params: nv()}, handleLXCTemplate)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/interfaces", Params: nv()}, handleLXCInterfaces)
	registerLXCMigrateRoutes(r, vm, nv)
}

// lxcOptionalNode is an optional parameter in pve-node format (clone's target).
func lxcOptionalNode(name string) ParamSpec {
	p := pNode()
	p.Name, p.Required = name, false
	return p
}

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
	if err := s.lxcCheckOSTemplate(node, r.str("ostemplate")); err != nil {
		return nil, err
	}
	mounts, err := s.lxcCreateMounts(node, r)
	if err != nil {
		return nil, err
	}
	g := newGuest(KindLXC, node, vmid)
	g.Config["lock"] = "create"
	s.addGuest(g, false)
	typ := "vzcreate"
	if r.bool("restore") {
		typ = "vzrestore"
	}
	return s.startTask(r, taskDef{Type: typ, ID: strconv.Itoa(vmid), Node: node,
		// The worker runs inside lock_config: the new config's file lock is held to its end.
		FileLocks: []int{vmid},
		Begin: func(t *task) error {
			if err := s.lxcBuild(g, r, mounts, t); err != nil {
				return fmt.Errorf("unable to create CT %d - %s", vmid, err.Error())
			}
			return nil
		},
		Finish: func(*task) error { return s.lxcFinishCreate(g, r) },
		OnFail: func() { s.lxcDropGuest(g) },
	}), nil
}

// lxcCheckOSTemplate verifies the template volume exists as PVE's abs_filesystem_path does.
func (s *Server) lxcCheckOSTemplate(node, volid string) error {
	stID, _, ok := splitVolID(volid)
	if !ok {
		return errParam("ostemplate", fmt.Sprintf("unable to parse volume ID '%s'", volid))
	}
	if _, ok := s.st.storage(node, stID); !ok {
		return errInternal("storage '%s' does not exist", stID)
	}
	if _, _, ok := s.findVolume(node, volid); !ok {
		return errInternal("can't find file '%s'", volid)
	}
	if c := contentOf(volid); c != "vztmpl" && c != "backup" {
		return errParam("ostemplate", fmt.Sprintf("volume '%s' is not a container template", volid))
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

func handleLXCList(s *Server, r *request) (any, error) {
	now := time.Now()
	return s.listGuests(r.node(), KindLXC, func(g *guest) map[string]any { return lxcStatus(g, now) })
}

// lxcStatus is PVE::LXC::vmstatus for one container: template only when it is one.
func lxcStatus(g *guest, now time.Time) map[string]any {
	m := map[string]any{
		"vmid": g.VMID, "status": g.Status, "type": "lxc", "cpus": guestCPUs(g), "maxmem": guestMaxMem(g),
		"maxswap": int64(atoiDefault(g.Config["swap"], 512)) * mib, "maxdisk": guestMaxDisk(g),
		"cpu": 0, "mem": 0, "swap": 0, "disk": 0, "netin": 0, "netout": 0, "diskread": 0, "diskwrite": 0, "uptime": 0,
	}
	if n := g.name(); n != "" {
		m["name"] = n
	}
	if g.running() && !g.StartedAt.IsZero() {
		m["uptime"] = int64(now.Sub(g.StartedAt).Seconds())
		m["mem"] = guestMaxMem(g) / 8
		m["cpu"] = 0.005
	}
	if l := g.lock(); l != "" {
		m["lock"] = l
	}
	if tags := g.Config["tags"]; tags != "" {
		m["tags"] = tags
	}
	if g.isTemplate() {
		m["template"] = 1
	}
	return m
}

func handleLXCStatus(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	m := lxcStatus(g, time.Now())
	m["ha"] = map[string]any{"managed": boolNum(g.HAManaged)}
	return m, nil
}

func handleLXCConfigGet(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if r.has("snapshot") {
		sn := g.findSnapshot(r.str("snapshot"))
		if sn == nil {
			return nil, errInternal("snapshot '%s' does not exist", r.str("snapshot"))
		}
		return lxcConfigData(sn.Config, g.digest()), nil
	}
	cfg := g.effectiveConfig()
	if r.bool("current") {
		cfg = g.Config
	}
	return lxcConfigData(cfg, g.digest()), nil
}

// lxcConfigData types a container config as PVE's JSON encoder writes it: integer and
// boolean keys as numbers, raw lxc.* keys as [key, value] pairs, everything else a string.
func lxcConfigData(cfg map[string]string, digest string) map[string]any {
	out := make(map[string]any, len(cfg)+1)
	var raw [][]string
	for _, k := range sortedKeys(cfg) {
		v := cfg[k]
		if strings.HasPrefix(k, "lxc.") {
			raw = append(raw, []string{k, v})
			continue
		}
		out[k] = lxcTypedValue(lxcParamTypes.lookup(k), v)
	}
	if len(raw) > 0 {
		out["lxc"] = raw
	}
	out["digest"] = digest
	return out
}

// lxcTypedValue renders one config value by its schema type.
func lxcTypedValue(spec *ParamSpec, v string) any {
	if spec == nil {
		return v
	}
	switch spec.Type {
	case TypeInteger, TypeBoolean:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	case TypeNumber:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	case TypeString:
		// Returned as it is.
	}
	return v
}

func handleLXCConfigPut(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if !lxcHasOptions(r) {
		return nil, errInternal("no options specified")
	}
	deletes, err := lxcConfigIDList(r, "delete")
	if err != nil {
		return nil, err
	}
	reverts, err := lxcConfigIDList(r, "revert")
	if err != nil {
		return nil, err
	}
	for _, k := range deletes {
		if contains(reverts, k) {
			return nil, errParam("delete", fmt.Sprintf("you can't use '-delete %s' and '-revert %s' at the same time", k, k))
		}
	}
	// update_vm does the rest inside lock_config, with no early checks: a create's file
	// lock makes it wait (then "got timeout") before it looks at the lock property.
	if err := s.awaitFileLock(KindLXC, g.VMID); err != nil {
		return nil, err
	}
	if g, err = s.lxcGuest(r); err != nil { // it may have changed while we waited
		return nil, err
	}
	if err := checkLock(g, r); err != nil {
		return nil, err
	}
	if err := lxcCheckDigest(g, r); err != nil {
		return nil, err
	}
	if err := s.lxcCheckDeletes(g, r, deletes); err != nil {
		return nil, err
	}
	for _, k := range reverts {
		delete(g.Pending, k)
		delete(g.PendingDelete, k)
	}
	if err := s.lxcApplySets(g, r); err != nil {
		return nil, err
	}
	for _, k := range deletes {
		s.lxcDeleteKey(g, k)
	}
	s.touch(g)
	return nil, nil
}

// lxcConfigIDList parses a delete/revert list with update_vm's checks and messages
// (including PVE's unbalanced quote in the set-and-delete one).
func lxcConfigIDList(r *request, name string) ([]string, error) {
	if !r.has(name) {
		return nil, nil
	}
	var out []string
	for _, k := range splitPVEList(r.str(name)) {
		switch {
		case lxcParamTypes.lookup(k) == nil && !strings.HasPrefix(k, "lxc."):
			return nil, errParam(name, fmt.Sprintf("unknown option '%s'", k))
		case r.has(k) && name == "delete":
			return nil, errParam(name, fmt.Sprintf("you can't use '-%s' and -delete %s' at the same time", k, k))
		case r.has(k):
			return nil, errParam(name, fmt.Sprintf("you can't use '-%s' and '-revert %s' at the same time", k, k))
		}
		out = append(out, k)
	}
	return out, nil
}

// lxcCheckDeletes refuses to drop the rootfs, as PVE does.
func (s *Server) lxcCheckDeletes(_ *guest, _ *request, deletes []string) error {
	for _, k := range deletes {
		if k == "rootfs" {
			return errParam("delete", "unable to delete rootfs")
		}
	}
	return nil
}

// lxcApplyPending is vmconfig_apply_pending: a removed mount point's volume is kept as
// an unusedN entry, then the pending values replace the current ones.
func lxcApplyPending(g *guest) {
	for _, k := range sortedKeys(g.PendingDelete) {
		if base, _, ok := splitIndexed(k); ok && base == "mp" {
			if vol, _ := driveVolume(g.Config[k]); vol != "" && vmidOfVolume(vol) == g.VMID {
				g.Config[lxcFreeUnusedKey(g.Config)] = vol
			}
		}
	}
	g.applyPending()
}

// lxcHasOptions is update_vm's "no options specified" test: anything besides node, vmid and digest.
func lxcHasOptions(r *request) bool {
	for k := range r.params {
		if k != "node" && k != "vmid" && k != "digest" {
			return true
		}
	}
	return false
}

var lxcPutOnly = map[string]bool{"node": true, "vmid": true, "delete": true, "revert": true, "digest": true}

func (s *Server) lxcApplySets(g *guest, r *request) error {
	for _, k := range sortedKeys(r.params) {
		if lxcPutOnly[k] {
			continue
		}
		v := r.params[k]
		if isLXCDiskKey(k) {
			nv, err := s.allocDrive(g, k, v)
			if err != nil {
				return err
			}
			v = nv
		}
		if base, idx, ok := splitIndexed(k); ok && base == "net" {
			v = normalizeLXCNet(v, g.VMID, idx)
		}
		if g.running() && !lxcHotpluggable(g.Config, k) {
			g.Pending[k] = v
			delete(g.PendingDelete, k)
			continue
		}
		g.Config[k] = v
		delete(g.Pending, k)
		delete(g.PendingDelete, k)
	}
	return nil
}

// lxcDeleteKey removes a key; a deleted mount point's volume becomes an unusedN entry.
func (s *Server) lxcDeleteKey(g *guest, k string) {
	if g.running() && !lxcHotDeletable(k) {
		g.PendingDelete[k] = true
		delete(g.Pending, k)
		return
	}
	if base, _, ok := splitIndexed(k); ok && base == "mp" {
		if vol, _ := driveVolume(g.Config[k]); vmidOfVolume(vol) == g.VMID {
			g.Config[lxcFreeUnusedKey(g.Config)] = vol
		}
	}
	delete(g.Config, k)
	delete(g.Pending, k)
}

func lxcFreeUnusedKey(cfg map[string]string) string {
	for i := 0; ; i++ {
		k := "unused" + strconv.Itoa(i)
		if _, ok := cfg[k]; !ok {
			return k
		}
	}
}

// handleLXCPending lists keys with current and pending values, passed through as stored.
func handleLXCPending(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	return pendingItems(g, func(_, v string) any { return v }), nil
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
		Begin: func(*task) error {
			if g.running() {
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
		if base, idx, ok := splitIndexed(k); ok && base == "net" {
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
		return false, errInternal("Cannot do full clones on a running container without snapshots")
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

func handleLXCStart(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if g.running() {
		return nil, errInternal("CT %d already running", g.VMID)
	}
	// pve-container checks the template flag and the lock inside the vzstart worker.
	return s.lxcPowerTask(r, g, "vzstart", func() error {
		if g.isTemplate() {
			return fmt.Errorf("you can't start a CT if it's a template")
		}
		return checkLock(g, r)
	}, func() {
		lxcApplyPending(g)
		s.setStatus(g, StatusRunning)
	}), nil
}

// lxcPowerTask runs a power action as a worker: check runs when the worker loads the
// config (its failure is a task failure, as in pve-container), apply when it is done.
func (s *Server) lxcPowerTask(r *request, g *guest, typ string, check func() error, apply func()) string {
	exists := func() error {
		if cur, ok := s.st.guests[g.VMID]; !ok || cur != g {
			return errNoConfig(KindLXC, g.Node, g.VMID)
		}
		return nil
	}
	return s.startTask(r, taskDef{Type: typ, ID: strconv.Itoa(g.VMID), Node: g.Node,
		Begin: func(*task) error {
			if err := exists(); err != nil {
				return err
			}
			return check()
		},
		Finish: func(*task) error {
			if err := exists(); err != nil {
				return err
			}
			apply()
			return nil
		}})
}

func (s *Server) lxcRequireRunning(g *guest) error {
	if !g.running() {
		return errInternal("CT %d not running", g.VMID)
	}
	return nil
}

func handleLXCStop(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if err := s.lxcRequireRunning(g); err != nil {
		return nil, err
	}
	return s.lxcPowerTask(r, g, "vzstop", func() error { return checkLock(g, r) }, func() { s.setStatus(g, StatusStopped) }), nil
}

func handleLXCShutdown(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if err := s.lxcRequireRunning(g); err != nil {
		return nil, err
	}
	return s.lxcPowerTask(r, g, "vzshutdown", func() error { return checkLock(g, r) }, func() { s.setStatus(g, StatusStopped) }), nil
}

// handleLXCReboot restarts the container inside one task, applying pending changes.
func handleLXCReboot(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if err := s.lxcRequireRunning(g); err != nil {
		return nil, err
	}
	return s.lxcPowerTask(r, g, "vzreboot", func() error { return checkLock(g, r) }, func() {
		s.setStatus(g, StatusStopped)
		lxcApplyPending(g)
		s.setStatus(g, StatusRunning)
	}), nil
}

// handleLXCResize checks everything before it forks, as pve-container's resize_vm does
// (load_and_check runs once synchronously and again in the worker): shrinking and a
// no-op size are synchronous 500s for containers, unlike QEMU where they fail the task.
func handleLXCResize(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	disk, sizeArg := r.str("disk"), r.str("size")
	if _, err := s.lxcResizeCheck(g, r, disk, sizeArg); err != nil {
		return nil, err
	}
	return s.startTask(r, taskDef{Type: "resize", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Finish: func(t *task) error {
			newSize, err := s.lxcResizeCheck(g, r, disk, sizeArg)
			if err != nil {
				return err
			}
			s.lxcApplySize(g, disk, newSize, t)
			return nil
		}}), nil
}

// lxcResizeCheck is load_and_check: lock, digest, ownership and the new size.
func (s *Server) lxcResizeCheck(g *guest, r *request, disk, sizeArg string) (int64, error) {
	if err := checkLock(g, r); err != nil {
		return 0, err
	}
	if err := lxcCheckDigest(g, r); err != nil {
		return 0, err
	}
	vol, opts := driveVolume(g.Config[disk])
	if vol == "" {
		return 0, errInternal("unable to parse volume ID '%s'", vol)
	}
	if owner := vmidOfVolume(vol); owner != g.VMID {
		return 0, errInternal("can't resize mount point owned by another container (%d)", owner)
	}
	cur, _ := parseSize(opts["size"])
	if _, v, ok := s.findVolume(g.Node, vol); ok {
		cur = v.Size
	}
	req, ok := parseSize(strings.TrimPrefix(sizeArg, "+"))
	if !ok {
		return 0, errInternal("invalid size string")
	}
	newSize := req
	if strings.HasPrefix(sizeArg, "+") {
		newSize = cur + req
	}
	if newSize < cur {
		return 0, errInternal("unable to shrink disk size")
	}
	if newSize == cur {
		return 0, errInternal("disk is already at specified size")
	}
	return newSize, nil
}

func (s *Server) lxcApplySize(g *guest, disk string, newSize int64, t *task) {
	vol, opts := driveVolume(g.Config[disk])
	if _, v, ok := s.findVolume(g.Node, vol); ok {
		v.Size = newSize
	}
	t.logf("Size of logical volume %s changed to %s.", vol, formatSize(newSize))
	opts["size"] = formatSize(newSize)
	g.Config[disk] = driveValue(vol, opts)
	s.touch(g)
}
