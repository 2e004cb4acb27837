package pvesim

import (
	"regexp"
	"strconv"
	"strings"
)

// GET /nodes/{node}/qemu/{vmid}/migrate, qemu-server's migrate_vm_precondition: what the
// GUI's migrate dialog asks before it offers a migration. It loads the config (so the VM
// must be on {node}), fails on a lock, and reports the VM's power state, which other nodes
// it may go to (every node but this one unless a storage its drives use is restricted to
// other nodes, which this simulator's storages never are), its local disks
// (check_vm_disks_local), its local resources (check_local_resources) and its mapped ones.
// The target parameter is accepted and ignored, as PVE does.

func handleQemuMigratePrecondition(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	if l := g.lock(); l != "" {
		return nil, errInternal("VM is locked (%s)", l)
	}
	disks, err := s.localDisks(g)
	if err != nil {
		return nil, err
	}
	running := g.running()
	lr := qemuLocalResources(g, running)
	if running && vncClipboardBlocks(g) {
		lr.local = append(lr.local, "clipboard=vnc")
	}
	mappedInfo := map[string]any{}
	for k, m := range lr.mapped {
		info := map[string]any{"name": m.name}
		if m.live {
			info["live-migration"] = 1
		}
		mappedInfo[k] = info
	}
	res := map[string]any{
		"running":              boolInt(running),
		"allowed_nodes":        s.otherNodes(g.Node),
		"not_allowed_nodes":    emptyNodeEntries(s.otherNodes(g.Node)),
		"local_disks":          disks,
		"local_resources":      lr.local,
		"mapped-resources":     sortedKeys(lr.mapped),
		"mapped-resource-info": mappedInfo,
		"has-dbus-vmstate":     1,
	}
	if g.HAManaged {
		// get_resource_motion_info: no HA rules are modelled, so nothing moves along.
		res["dependent-ha-resources"] = []string{}
	}
	return res, nil
}

// otherNodes lists the cluster's nodes but one, in cluster order.
func (s *Server) otherNodes(local string) []string {
	out := []string{}
	for _, n := range s.st.nodes {
		if n != local {
			out = append(out, n)
		}
	}
	return out
}

// emptyNodeEntries is not_allowed_nodes as migrate_vm_precondition builds it:
// check_local_storage_availability returns an entry (an empty hash when nothing is missing)
// for every node, and the API copies each one in, so allowed nodes appear with {}.
func emptyNodeEntries(nodes []string) map[string]any {
	out := make(map[string]any, len(nodes))
	for _, n := range nodes {
		out[n] = map[string]any{}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// localDisks is check_vm_disks_local over foreach_volid: every volume of the config, its
// pending changes and its snapshots that is not on a shared storage nor marked shared, with
// foreach_volid's attributes (an empty CD-ROM drive is left out). PVE lists them in hash
// order; they are sorted by volid here.
func (s *Server) localDisks(g *guest) ([]map[string]any, error) {
	vols := map[string]map[string]any{}
	visit := func(cfg map[string]string, snap string, pending bool) error {
		for _, k := range driveKeys(g, cfg) {
			if err := s.addLocalDisk(vols, k, cfg[k], g.Node, snap, pending); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(g.Config, "", false); err != nil {
		return nil, err
	}
	if err := visit(g.Pending, "", true); err != nil {
		return nil, err
	}
	for _, sn := range g.Snapshots {
		if err := visit(sn.Config, sn.Name, false); err != nil {
			return nil, err
		}
	}
	out := []map[string]any{}
	for _, volid := range sortedKeys(vols) {
		a := vols[volid]
		if a["shared"] == 1 || (a["cdrom"] == 1 && volid == "none") {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// addLocalDisk folds one drive into foreach_volid's per-volume attributes, skipping volumes
// on shared storages; a storage unknown to the node fails as storage_config does.
func (s *Server) addLocalDisk(vols map[string]map[string]any, key, value, node, snap string, pending bool) error {
	volid, opts := driveVolume(value)
	if volid == "" {
		return nil
	}
	if stID, _, ok := splitVolID(volid); ok && !strings.HasPrefix(volid, "/") {
		st, ok := s.st.storage(node, stID)
		if !ok {
			return errInternal("storage '%s' does not exist", stID)
		}
		if st.Shared {
			return nil
		}
	}
	a, seen := vols[volid]
	if !seen {
		a = map[string]any{"volid": volid, "cdrom": 1, "is_cloudinit": 0, "replicate": 0, "shared": 0,
			"is_unused": 0, "is_attached": 0, "is_vmstate": 0, "is_tpmstate": 0}
		vols[volid] = a
	}
	unused := strings.HasPrefix(key, "unused")
	setIf(a, "cdrom", 0, opts["media"] != "cdrom")
	setIf(a, "is_cloudinit", 1, reCloudInitVolume.MatchString(volid))
	setIf(a, "replicate", 1, opts["replicate"] != "0")
	setIf(a, "shared", 1, opts["shared"] == "1")
	setIf(a, "is_unused", 1, unused)
	setIf(a, "is_attached", 1, a["is_unused"] == 0 && snap == "" && !pending)
	setIf(a, "is_tpmstate", 1, key == "tpmstate0")
	setIf(a, "referenced_in_pending", 1, pending)
	if snap != "" {
		refs, _ := a["referenced_in_snapshot"].(map[string]any)
		if refs == nil {
			refs = map[string]any{}
			a["referenced_in_snapshot"] = refs
		}
		refs[snap] = 1
	}
	if size, ok := parseSize(opts["size"]); ok && a["size"] == nil && size > 0 {
		a["size"] = size
	}
	if !unused {
		a["drivename"] = key
	}
	return nil
}

func setIf(a map[string]any, key string, v any, cond bool) {
	if cond {
		a[key] = v
	}
}

// localResources is check_local_resources' answer: the resources that tie a VM to its node
// and the mapped ones (which may move where their mapping exists).
type localResources struct {
	local  []string
	mapped map[string]mappedResource
}

type mappedResource struct {
	name string
	live bool
}

// blocking are the local resources that are not mapped: QemuMigrate's prepare refuses them
// without force.
func (lr localResources) blocking() []string {
	var out []string
	for _, k := range lr.local {
		if _, ok := lr.mapped[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

var reLocalResourceKey = regexp.MustCompile(`^(usb|hostpci|serial|parallel|virtiofs)\d+$`)

// qemuLocalResources is PVE::QemuMigrate::Helpers::check_local_resources with state =
// running: SEV, TDX and virtiofs cannot migrate live; old-style hostusb/hostpci, ivshmem,
// USB devices other than SPICE, passed-through PCI devices (a mapped one only when running
// and its mapping is not live-migration-capable, which no mapping here is), serial ports
// other than sockets, parallel ports and virtiofs shares tie the VM to its node. PVE walks
// the config in hash order; the keys are sorted here.
func qemuLocalResources(g *guest, running bool) localResources {
	lr := localResources{local: []string{}, mapped: map[string]mappedResource{}}
	cfg := g.Config
	if running {
		lr.local = append(lr.local, liveOnlyBlockers(cfg)...)
	}
	for _, k := range []string{"hostusb", "hostpci", "ivshmem"} {
		if cfg[k] != "" {
			lr.local = append(lr.local, k)
		}
	}
	for _, k := range sortedKeys(cfg) {
		if lr.addDevice(k, cfg[k], running) && reLocalResourceKey.MatchString(k) {
			lr.local = append(lr.local, k)
		}
	}
	return lr
}

// liveOnlyBlockers are what stops only a live migration: SEV, TDX and virtiofs.
func liveOnlyBlockers(cfg map[string]string) []string {
	var out []string
	for _, k := range []string{"amd-sev", "intel-tdx"} {
		if cfg[k] != "" {
			out = append(out, k)
		}
	}
	if hasIndexedKey(cfg, "virtiofs") {
		out = append(out, "virtiofs")
	}
	return out
}

// addDevice records device key's mapping, if any, and reports whether the device may
// tie the VM to its node: a SPICE USB port, a mapped PCI device of a stopped VM and a
// socket serial port do not.
func (lr localResources) addDevice(key, value string, running bool) bool {
	opts := propOptions(value, defaultKeyOf(key))
	switch {
	case strings.HasPrefix(key, "usb"):
		if strings.EqualFold(opts["host"], "spice") {
			return false
		}
		if name := opts["mapping"]; name != "" {
			lr.mapped[key] = mappedResource{name: name}
		}
	case strings.HasPrefix(key, "hostpci"):
		if name := opts["mapping"]; name != "" {
			lr.mapped[key] = mappedResource{name: name}
			return running
		}
	case strings.HasPrefix(key, "virtiofs"):
		lr.mapped[key] = mappedResource{name: opts["dirid"]}
	case strings.HasPrefix(key, "serial") && value == "socket":
		return false
	}
	return true
}

// propOptions reads a property string's key=value pairs, its unnamed first part under
// defaultKey.
func propOptions(value, defaultKey string) map[string]string {
	opts := map[string]string{}
	for i, p := range propertyParts(value) {
		k, v, ok := strings.Cut(p, "=")
		if !ok && i == 0 {
			opts[defaultKey] = p
			continue
		}
		opts[k] = v
	}
	return opts
}

// defaultKeyOf is the default key of the property strings check_local_resources reads.
func defaultKeyOf(key string) string {
	if strings.HasPrefix(key, "virtiofs") {
		return "dirid"
	}
	return "host"
}

func hasIndexedKey(cfg map[string]string, keyPrefix string) bool {
	for k := range cfg {
		if b, _, ok := splitIndexed(k); ok && b == keyPrefix {
			return true
		}
	}
	return false
}

var reMachineVersion = regexp.MustCompile(`^(?:pc|pc-i440fx|pc-q35|q35|virt)-(\d+)\.(\d+)`)

// vncClipboardBlocks: a running VM with vga clipboard=vnc cannot migrate live on a machine
// version older than 10.1. The running machine is the config's pinned one; without a pin
// it is PVE 9's QEMU (10.1 or later), which allows it.
func vncClipboardBlocks(g *guest) bool {
	if propOptions(g.Config["vga"], "type")["clipboard"] != "vnc" {
		return false
	}
	m := reMachineVersion.FindStringSubmatch(propOptions(g.Config["machine"], "type")["type"])
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major < 10 || (major == 10 && minor < 1)
}
