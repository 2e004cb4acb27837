package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A VM's configuration under /nodes/{node}/qemu/{vmid}/config and /pending: reading it,
// and the synchronous PUT and asynchronous POST update (qemu-server src/PVE/API2/Qemu.pm,
// vm_config, vm_pending, update_vm, update_vm_async).

// qemuControlParams are update parameters that are not config keys.
var qemuControlParams = []string{"node", "vmid", "digest", "delete", "revert", "skiplock", "background_delay", "force", "import-working-storage"}

func qemuUpdateParams(async bool) []ParamSpec {
	ps := []ParamSpec{pNode(), pVMID(), pString("digest").pattern(`[a-fA-F0-9]{0,64}`), pString("delete"), pString("revert"), pBool("skiplock")}
	if async {
		ps = append(ps, pInt("background_delay").min(1).max(30))
	}
	for _, p := range qemuConfigParams() {
		if !async && p.Name == "import-working-storage" {
			continue
		}
		ps = append(ps, p)
	}
	return ps
}

// typedConfig renders config values with their schema types: PVE's JSON has numbers for
// integer/number keys, 0/1 for booleans, and strings for everything else ("memory": "2048").
func typedConfig(cfg map[string]string, ps *paramSet) map[string]any {
	out := make(map[string]any, len(cfg)+1)
	for k, v := range cfg {
		out[k] = typedValue(ps, k, v)
	}
	return out
}

func typedValue(ps *paramSet, key, v string) any {
	if key == "cipassword" {
		return "**********"
	}
	t := TypeString
	if spec := ps.lookup(key); spec != nil {
		t = spec.Type
	} else if key == "snaptime" {
		t = TypeInteger
	}
	switch t {
	case TypeInteger:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	case TypeNumber:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	case TypeBoolean:
		if v == "1" || v == "0" {
			return atoiDefault(v, 0)
		}
	case TypeString:
		// Returned as it is.
	}
	return v
}

func handleQemuConfigGet(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	var cfg map[string]string
	switch {
	case r.has("snapshot"):
		sn := g.findSnapshot(r.str("snapshot"))
		if sn == nil {
			return nil, errInternal("snapshot '%s' does not exist", r.str("snapshot"))
		}
		cfg = sn.Config
	case r.bool("current"):
		cfg = g.Config
	default:
		cfg = g.effectiveConfig()
	}
	out := typedConfig(cfg, qemuParamTypes)
	out["digest"] = g.digest()
	return out, nil
}

// handleQemuPending lists every key with its current and pending value in one call.
func handleQemuPending(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	return pendingItems(g, schemaTyped(qemuParamTypes)), nil
}

// pendingItems lists every key with its current value, pending value and pending delete,
// rendering values with value.
func pendingItems(g *guest, value func(key, v string) any) []map[string]any {
	keys := map[string]bool{}
	for k := range g.Config {
		keys[k] = true
	}
	for k := range g.Pending {
		keys[k] = true
	}
	for k := range g.PendingDelete {
		keys[k] = true
	}
	out := make([]map[string]any, 0, len(keys))
	for _, k := range sortedKeys(keys) {
		item := map[string]any{"key": k}
		if v, ok := g.Config[k]; ok {
			item["value"] = value(k, v)
		}
		if v, ok := g.Pending[k]; ok {
			item["pending"] = value(k, v)
		}
		if g.PendingDelete[k] {
			item["delete"] = 1
		}
		out = append(out, item)
	}
	return out
}

// schemaTyped renders config values with their schema types (see typedValue).
func schemaTyped(ps *paramSet) func(key, v string) any {
	return func(key, v string) any { return typedValue(ps, key, v) }
}

// configChange is a parsed config update.
type configChange struct {
	set    map[string]string
	del    []string
	revert []string
}

var reListSep = regexp.MustCompile(`[,;\s\x00]+`)

func splitList(v string) []string {
	var out []string
	for _, p := range reListSep.Split(v, -1) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// changeFrom extracts the config keys of an update, checking delete/revert keys.
func changeFrom(r *request, ps *paramSet, control []string) (configChange, error) {
	ch := configChange{set: map[string]string{}}
	for k, v := range r.params {
		if !contains(control, k) {
			ch.set[k] = v
		}
	}
	ch.del = splitList(r.str("delete"))
	ch.revert = splitList(r.str("revert"))
	for _, k := range append(append([]string{}, ch.del...), ch.revert...) {
		if ps.lookup(k) == nil {
			return ch, errParam("delete", fmt.Sprintf("invalid configuration ID '%s'", k))
		}
		if _, both := ch.set[k]; both {
			return ch, errParam("delete", fmt.Sprintf("you can't use '-%s' and -delete %s' at the same time", k, k))
		}
	}
	return ch, nil
}

// fastPlugKeys change on a running VM at once, without QEMU's involvement.
var fastPlugKeys = []string{"name", "description", "tags", "onboot", "protection", "startup", "lock", "hookscript", "vmstatestorage", "shares", "autostart", "template"}

// hotplugFeatures is the VM's "hotplug" option as a set; PVE's default is network,disk,usb.
func hotplugFeatures(g *guest) map[string]bool {
	v, ok := g.Config["hotplug"]
	if !ok || v == "1" {
		v = "network,disk,usb"
	}
	out := map[string]bool{}
	if v == "0" {
		return out
	}
	for _, f := range splitList(v) {
		out[f] = true
	}
	return out
}

// appliesLive reports whether a change of key on a running VM takes effect at once
// rather than going to pending.
func appliesLive(g *guest, key, value string) bool {
	if contains(fastPlugKeys, key) || isCIKey(key) {
		return true
	}
	hp := hotplugFeatures(g)
	keyPrefix, _, _ := splitIndexed(key)
	switch {
	case keyPrefix == "net":
		return hp["network"]
	case keyPrefix == "scsi" || keyPrefix == "virtio":
		return hp["disk"]
	case keyPrefix == "ide" || keyPrefix == "sata":
		return isCDROM(value) || isCDROM(g.Config[key])
	case keyPrefix == "usb":
		return hp["usb"]
	case keyPrefix == "unused":
		return true
	case key == "memory":
		return hp["memory"]
	case key == "vcpus":
		return hp["cpu"]
	case key == "balloon" || key == "cpulimit" || key == "cpuunits":
		return true
	}
	return false
}

// applyQemuChange writes a config update as PVE's update_vm does: on a stopped VM all
// pending changes and this update apply at once; on a running one only what can be
// hotplugged, the rest goes to pending.
func (s *Server) applyQemuChange(g *guest, ch configChange) error {
	for _, k := range ch.revert {
		delete(g.Pending, k)
		delete(g.PendingDelete, k)
	}
	set, err := s.prepareValues(g, ch.set)
	if err != nil {
		return err
	}
	if !g.running() {
		g.applyPending()
	}
	for _, k := range ch.del {
		if !g.running() || appliesLive(g, k, g.Config[k]) {
			s.deleteKey(g, k)
			delete(g.Pending, k)
			delete(g.PendingDelete, k)
			continue
		}
		delete(g.Pending, k)
		if _, exists := g.Config[k]; exists {
			g.PendingDelete[k] = true
		}
	}
	for _, k := range sortedKeys(set) {
		v := set[k]
		if !g.running() || appliesLive(g, k, v) {
			s.replaceKey(g, k, v)
			delete(g.Pending, k)
			delete(g.PendingDelete, k)
			continue
		}
		g.Pending[k] = v
		delete(g.PendingDelete, k)
	}
	cleanupPending(g)
	s.touch(g)
	return nil
}

// prepareValues allocates disks and gives NICs their MACs before anything is written.
func (s *Server) prepareValues(g *guest, set map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(set))
	for _, k := range sortedKeys(set) {
		v := set[k]
		keyPrefix, idx, _ := splitIndexed(k)
		switch {
		case isQemuDiskKey(k):
			nv, err := s.allocDrive(g, k, v)
			if err != nil {
				return nil, err
			}
			v = nv
		case keyPrefix == "net":
			v = normalizeNet(v, g.VMID, idx)
		}
		out[k] = v
	}
	return out, nil
}

// cleanupPending drops pending values equal to the current ones, as PVE's cleanup_pending.
func cleanupPending(g *guest) {
	for k, v := range g.Pending {
		if cur, ok := g.Config[k]; ok && cur == v {
			delete(g.Pending, k)
		}
	}
	for k := range g.PendingDelete {
		if _, ok := g.Config[k]; !ok {
			delete(g.PendingDelete, k)
		}
	}
}

// replaceKey sets a key; a replaced disk volume becomes an unused disk.
func (s *Server) replaceKey(g *guest, k, v string) {
	if old, ok := g.Config[k]; ok && isQemuDiskKey(k) && old != v {
		oldVol, _ := driveVolume(old)
		newVol, _ := driveVolume(v)
		if oldVol != newVol {
			s.detachVolume(g, old)
		}
	}
	g.Config[k] = v
}

// deleteKey removes a key; disks become unusedN, unusedN and cloud-init drives are freed.
func (s *Server) deleteKey(g *guest, k string) {
	v, ok := g.Config[k]
	if !ok {
		return
	}
	delete(g.Config, k)
	keyPrefix, _, _ := splitIndexed(k)
	switch {
	case keyPrefix == "unused":
		vol, _ := driveVolume(v)
		s.freeVolume(g.Node, vol)
	case isQemuDiskKey(k):
		s.detachVolume(g, v)
	}
}

func (s *Server) detachVolume(g *guest, value string) {
	if isCDROM(value) && !strings.Contains(value, "cloudinit") {
		return
	}
	vol, _ := driveVolume(value)
	if strings.Contains(vol, "cloudinit") {
		s.freeVolume(g.Node, vol)
		return
	}
	if _, _, ok := s.findVolume(g.Node, vol); !ok || vmidOfVolume(vol) != g.VMID {
		return
	}
	for i := 0; i <= 255; i++ {
		key := fmt.Sprintf("unused%d", i)
		if _, used := g.Config[key]; !used {
			g.Config[key] = vol
			return
		}
	}
}

// updateQemuConfig runs update_vm_api's checks, then applies the change.
func (s *Server) updateQemuConfig(g *guest, r *request, ch configChange) error {
	if err := checkQemuUpdate(g, r, ch); err != nil {
		return err
	}
	return s.applyQemuChange(g, ch)
}

// checkQemuUpdate is update_vm_api's early checks, run before forking and again in the
// worker: the digest, the lock property (unless skiplock), and balloon against memory.
func checkQemuUpdate(g *guest, r *request, ch configChange) error {
	if d := r.str("digest"); d != "" && d != g.digest() {
		return errInternal("detected modified configuration - file changed by other user? Try again.")
	}
	if err := checkLock(g, r); err != nil {
		return err
	}
	return checkBalloon(g, ch)
}

// defaultMemoryMB is qemu-server's default memory.
const defaultMemoryMB = 512

// checkBalloon refuses a balloon target above the memory the VM will have.
func checkBalloon(g *guest, ch configChange) error {
	memory, setMemory := ch.set["memory"]
	balloon, setBalloon := ch.set["balloon"]
	if !setMemory && !setBalloon {
		return nil
	}
	if !setMemory {
		memory = firstSet(g.Pending["memory"], g.Config["memory"])
	}
	if !setBalloon {
		balloon = firstSet(g.Pending["balloon"], g.Config["balloon"])
	}
	maxMem := atoiDefault(strings.TrimPrefix(strings.SplitN(memory, ",", 2)[0], "current="), defaultMemoryMB)
	if b := atoiDefault(balloon, 0); b > 0 && b > maxMem {
		return errInternal("balloon value too large (must be smaller than assigned memory)")
	}
	return nil
}

// firstSet returns the first non-empty value.
func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// qemuConfigRequest resolves the VM of a config update and parses the change.
func (s *Server) qemuConfigRequest(r *request) (*guest, configChange, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, configChange{}, err
	}
	ch, err := changeFrom(r, qemuParamTypes, qemuControlParams)
	if err != nil {
		return nil, configChange{}, err
	}
	if err := s.checkImportSources(r, ch.set); err != nil {
		return nil, configChange{}, err
	}
	return g, ch, nil
}

// handleQemuConfigPut is the synchronous update: errors come back as 500s, a config file
// lock held by a task included (after waiting for it, as lock_config does).
func handleQemuConfigPut(s *Server, r *request) (any, error) {
	g, ch, err := s.qemuConfigRequest(r)
	if err != nil {
		return nil, err
	}
	if err := s.awaitFileLock(KindQemu, g.VMID); err != nil {
		return nil, err
	}
	if g, err = s.qemuGuest(r); err != nil { // it may have changed while we waited
		return nil, err
	}
	return nil, s.updateQemuConfig(g, r, ch)
}

// handleQemuConfigPost is the asynchronous update: update_vm_api's early checks (digest,
// lock property, balloon) fail the request with a 500 before forking; the qmconfig worker
// repeats them and does the work.
func handleQemuConfigPost(s *Server, r *request) (any, error) {
	g, ch, err := s.qemuConfigRequest(r)
	if err != nil {
		return nil, err
	}
	if err := checkQemuUpdate(g, r, ch); err != nil {
		return nil, err
	}
	vmid := g.VMID
	upid := s.startTask(r, taskDef{Type: "qmconfig", ID: strconv.Itoa(vmid), Node: g.Node,
		Finish: func(t *task) error {
			return s.withFileLockInWorker(t, KindQemu, vmid, func() error {
				cur, ok := s.st.guests[vmid]
				if !ok {
					return errNoConfig(KindQemu, r.node(), vmid)
				}
				return s.updateQemuConfig(cur, r, ch)
			})
		}})
	if r.has("background_delay") && s.st.tasks[upid].ExitStatus == "OK" {
		return nil, nil
	}
	return upid, nil
}
