package proxmox

import (
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
)

// VMDisk is one disk the spec manages, keyed by device (scsi0, virtio1, ...).
type VMDisk struct {
	Storage string
	SizeGB  int
	// ImportFrom creates the disk as a copy of this volume (PVE's
	// import-from), at the volume's size; SizeGB is not used then.
	ImportFrom string
}

// options are the disk's options by key of QEMUDiskFields.
func (d VMDisk) options() map[string]any { return map[string]any{sizeKey: d.SizeGB} }

// allocation is the value of a new disk in a create call.
func (d VMDisk) allocation() string {
	if d.ImportFrom != "" {
		return d.Storage + ":0,import-from=" + d.ImportFrom
	}
	return fmt.Sprintf("%s:%d", d.Storage, d.SizeGB)
}

// VMNIC is one network interface the spec manages (netN): its model and
// options by key of QEMUNICFields (bridge, tag, ...); options it leaves out
// are kept as PVE has them.
type VMNIC struct {
	Model   string
	Options map[string]any
}

// Bridge is the bridge the interface names, "" when it names none.
func (n VMNIC) Bridge() string {
	b, _ := QEMUNICFields.Encode("bridge", n.Options["bridge"])
	return b
}

// VMCloudInit is the cloud-init configuration, by table: the password is
// not in it (it never reads back; the controller writes it apart).
type VMCloudInit struct {
	// Config are the keys by PVE key (QEMUCloudInitFields), as the API
	// holds them; Encode drops those left unset.
	Config map[string]any
	// IPConfigs are each interface's ipconfigN (index = interface), options
	// by key of QEMUIPConfigFields.
	IPConfigs []map[string]any
	// Custom are cicustom's snippet volumes by key of QEMUCICustomFields.
	Custom map[string]any
}

// CustomVolumes are the snippet volumes cicustom names, in its key order.
func (ci *VMCloudInit) CustomVolumes() []string {
	if ci == nil {
		return nil
	}
	var out []string
	for _, k := range QEMUCICustomFields.keys() {
		if v, ok := QEMUCICustomFields.Encode(k, ci.Custom[k]); ok {
			out = append(out, v)
		}
	}
	return out
}

// VMSpec is what a VirtualMachine asks of a QEMU guest, in the provider's
// terms; this package turns it into PVE keys. Zero values mean "not managed".
type VMSpec struct {
	// Config are the scalar keys by PVE key (QEMUFields), as the API holds
	// them; Encode drops those left unset.
	Config     map[string]any
	Disks      map[string]VMDisk // device -> disk
	NICs       []VMNIC           // net0, net1, ...
	PCIDevices []map[string]any  // hostpci0, ...: options by key of QEMUPCIFields
	CloudInit  *VMCloudInit
	// AdditionalConfig are raw PVE keys the user manages directly.
	AdditionalConfig map[string]string
	// OSImageDevice/OSImageVolume attach an image at creation from scratch.
	OSImageDevice, OSImageVolume string
}

// managedKeys renders the keys of s compared verbatim (modulo formatting).
func (s VMSpec) managedKeys() map[string]string {
	k := encodeConfig(QEMUFields, s.Config)
	for i, opts := range s.PCIDevices {
		k["hostpci"+strconv.Itoa(i)] = QEMUPCIFields.EncodeProps(opts)
	}
	if ci := s.CloudInit; ci != nil {
		cloudInitKeys(ci, k)
	}
	for key, v := range s.AdditionalConfig {
		k[key] = v
	}
	return k
}

func cloudInitKeys(ci *VMCloudInit, k map[string]string) {
	maps.Copy(k, encodeConfig(QEMUCloudInitFields, ci.Config))
	for i, opts := range ci.IPConfigs {
		setNonEmpty(k, "ipconfig"+strconv.Itoa(i), QEMUIPConfigFields.EncodeProps(opts))
	}
	setNonEmpty(k, "cicustom", QEMUCICustomFields.EncodeProps(ci.Custom))
}

func setNonEmpty(m map[string]string, k, v string) {
	if v != "" {
		m[k] = v
	}
}

// encodeConfig renders the values a table knows, leaving out those unset.
func encodeConfig(t FieldTable, config map[string]any) map[string]string {
	k := make(map[string]string, len(config))
	for key, v := range config {
		if enc, ok := t.Encode(key, v); ok {
			k[key] = enc
		}
	}
	return k
}

// nicValueNew is a new netN value: the model (carrying the MAC when the
// spec names one), then the options in key order.
func nicValueNew(n VMNIC) string {
	ps := PropString{values: map[string]string{}}
	nicValueInto(&ps, n, PropString{}, "", "", "")
	return ps.String()
}

// CreateParams renders s as the parameters of POST /nodes/{node}/qemu
// (creation from scratch), with description added. Cloud-init gets a drive
// on the first disk's storage.
func (s VMSpec) CreateParams(description string) map[string]string {
	p := s.managedKeys()
	setNonEmpty(p, "description", description)
	p["scsihw"] = "virtio-scsi-pci"
	devices := sortedKeys(s.Disks)
	for _, dev := range devices {
		d := s.Disks[dev]
		p[dev] = d.allocation()
	}
	if len(devices) > 0 {
		p["boot"] = "order=" + devices[0]
	}
	for i, n := range s.NICs {
		p["net"+strconv.Itoa(i)] = nicValueNew(n)
	}
	if s.CloudInit != nil && len(devices) > 0 {
		if _, taken := p["ide2"]; !taken && s.OSImageDevice != "ide2" {
			p["ide2"] = s.Disks[devices[0]].Storage + ":cloudinit"
		} else if _, taken := p["ide3"]; !taken {
			p["ide3"] = s.Disks[devices[0]].Storage + ":cloudinit"
		}
	}
	if s.OSImageDevice != "" && s.OSImageVolume != "" {
		v := s.OSImageVolume
		if strings.HasPrefix(s.OSImageDevice, "ide") || strings.HasPrefix(s.OSImageDevice, "sata") {
			if !strings.Contains(v, "media=") && strings.HasSuffix(strings.SplitN(v, ",", 2)[0], ".iso") {
				v += ",media=cdrom"
			}
		}
		p[s.OSImageDevice] = v
	}
	return p
}

// Resize grows one disk.
type Resize struct {
	Disk string
	Size string // e.g. "60G"
}

// VMPlan is what it takes to make a guest match a VMSpec.
type VMPlan struct {
	// Set are keys changed synchronously (PUT config).
	Set map[string]string
	// NewDisks are disks to allocate (POST config, async).
	NewDisks map[string]string
	Resizes  []Resize
	// Refused are changes not made (shrinking, moving a disk), each a
	// sentence naming the field.
	Refused []string
	// Fields names what drifted, for events.
	Fields []string
}

// Empty reports whether the plan changes nothing (refusals aside).
func (p VMPlan) Empty() bool {
	return len(p.Set) == 0 && len(p.NewDisks) == 0 && len(p.Resizes) == 0
}

// Diff compares s with a guest's configuration (the values it will have
// after the next boot, so a change PVE already holds pending is not sent
// again). Only what s sets is compared.
func Diff(s VMSpec, cfg GuestConfig) VMPlan {
	p := VMPlan{Set: map[string]string{}, NewDisks: map[string]string{}}
	keys := s.managedKeys()
	for _, k := range sortedKeys(keys) {
		// An absent key has PVE's default, which may be what the spec asks.
		have, present := cfg.Effective(k)
		if sameValue(qemuTable(k), k, keys[k], have, present) {
			continue
		}
		p.Set[k] = keys[k]
		p.Fields = append(p.Fields, k)
	}
	for i, n := range s.NICs {
		k := "net" + strconv.Itoa(i)
		if v, changed := nicValue(n, cfg, k); changed {
			p.Set[k] = v
			p.Fields = append(p.Fields, k)
		}
	}
	for _, k := range sortedKeys(s.Disks) {
		diffDisk(&p, k, s.Disks[k], cfg)
	}
	return p
}

func diffDisk(p *VMPlan, key string, want VMDisk, cfg GuestConfig) {
	have, ok := cfg.Effective(key)
	if !ok {
		p.NewDisks[key] = fmt.Sprintf("%s:%d", want.Storage, want.SizeGB)
		p.Fields = append(p.Fields, key)
		return
	}
	ps := ParsePropString(have)
	if refused := storageRefusal("disk", key, ps, want.Storage); refused != "" {
		p.Refused = append(p.Refused, refused)
		return
	}
	switch grow, refused := growth(QEMUDiskFields, "disk", key, want.options(), ps); {
	case grow != nil:
		p.Resizes = append(p.Resizes, *grow)
		p.Fields = append(p.Fields, key)
	case refused != "":
		p.Refused = append(p.Refused, refused)
	}
}

// storageRefusal says why a volume (a noun: "disk") on another storage than
// want is not moved; "" when it is where the spec wants it, or either is
// unknown.
func storageRefusal(noun, key string, ps PropString, want string) string {
	st := diskStorage(ps)
	if want == "" || st == "" || st == want {
		return ""
	}
	return fmt.Sprintf("%s %s is on storage %q, the spec asks for %q: %ss are not moved automatically", noun, key, st, want, noun)
}

// growth compares the Grows options of a volume (a noun: "disk"; key, its
// value ps) with want (by option of t, as the API holds them): a Resize
// when the spec asks for more, a refusal naming the field when it asks for
// less, since PVE only grows them; neither when they match or either side
// is unknown.
func growth(t FieldTable, noun, key string, want map[string]any, ps PropString) (*Resize, string) {
	for _, opt := range t.keys() {
		enc, set := t.Encode(opt, want[opt])
		if !set {
			continue
		}
		have, _ := ps.Get(opt)
		switch grow, shrink := t.Grows(opt, enc, have); {
		case grow:
			return &Resize{Disk: key, Size: enc}, ""
		case shrink:
			return nil, fmt.Sprintf("%s %s is %s, the spec asks for %s: %ss are never shrunk", noun, key, have, enc, noun)
		}
	}
	return nil, ""
}

// nicValue returns the netN value with the spec's model and options applied
// to what the guest has, keeping the MAC and every other option.
func nicValue(want VMNIC, cfg GuestConfig, key string) (string, bool) {
	have, ok := cfg.Effective(key)
	if !ok {
		return nicValueNew(want), true
	}
	ps := ParsePropString(have)
	model, mac, modelKey := nicModel(ps)
	next := PropString{values: map[string]string{}}
	nicValueInto(&next, want, ps, model, mac, modelKey)
	for _, k := range ps.keys {
		if k != modelKey && (modelKey != "" || k != "") {
			if _, set := next.Get(k); !set {
				next.Set(k, ps.values[k])
			}
		}
	}
	return next.String(), !sameProps(next.String(), have)
}

// nicValueInto writes the model key (the MAC is its value) and the options
// of want that differ from the guest's (have, with its model, MAC and model
// key; all empty for a new interface) into ps.
func nicValueInto(ps *PropString, want VMNIC, have PropString, model, mac, modelKey string) {
	if want.Model != "" {
		model = want.Model
	}
	if model == "" {
		model = "virtio"
	}
	if m, ok := QEMUNICFields.Encode("macaddr", want.Options["macaddr"]); ok {
		mac = m
	}
	switch {
	case modelKey == "model":
		ps.Set("model", model)
		if mac != "" {
			ps.Set("macaddr", mac)
		}
	case mac != "":
		ps.Set(model, mac)
	default:
		ps.Set("", model)
	}
	for _, k := range QEMUNICFields.keys() {
		enc, set := QEMUNICFields.Encode(k, want.Options[k])
		if !set || k == "macaddr" {
			continue
		}
		if cur, present := have.Get(k); !QEMUNICFields.Same(k, enc, cur, present) {
			ps.Set(k, enc)
		}
	}
}

// sameValue compares a spec value of key with the guest's (have; present
// false when the config lacks key), by the key's codec and PVE's default
// when table knows it, else as property strings.
func sameValue(t FieldTable, key, want, have string, present bool) bool {
	if _, known := t.row(key); known {
		return t.Same(key, want, have, present)
	}
	want, have = strings.TrimSpace(want), strings.TrimSpace(have)
	if want == have {
		return true
	}
	if !present {
		return false
	}
	return sameProps(want, have)
}

// sameProps compares two property strings as sets of key=value pairs.
func sameProps(a, b string) bool {
	pa, pb := ParsePropString(a), ParsePropString(b)
	if len(pa.values) != len(pb.values) {
		return false
	}
	for k, v := range pa.values {
		if w, ok := pb.values[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// AgentEnabled reports whether a guest's config enables the guest agent
// ("1" or "enabled=1,...").
func AgentEnabled(cfg GuestConfig) bool {
	v, ok := cfg.Current("agent")
	if !ok {
		return false
	}
	ps := ParsePropString(v)
	if e, ok := ps.Get("enabled"); ok {
		return boolText(e)
	}
	first, _ := ps.Get("")
	return boolText(first)
}

// Description returns a guest's description (notes).
func Description(cfg GuestConfig) string {
	d, _ := cfg.Effective("description")
	return d
}

// Lock returns a guest's config lock ("clone", "create", "migrate", ...)
// when /pending reports one.
func Lock(cfg GuestConfig) string {
	l, _ := cfg.Current("lock")
	return l
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
