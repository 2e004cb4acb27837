package proxmox

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Codec is how a configuration value is written on the wire and compared.
type Codec int

// The codecs of PVE's configuration keys.
const (
	// Text is compared verbatim (modulo surrounding spaces).
	Text Codec = iota
	// Number is an integer.
	Number
	// Bool is 0 or 1; an absent key has the field's Default.
	Bool
	// Leading is the value of a property string's default key (memory's
	// current, cpu's cputype): the other options are left as PVE has them.
	Leading
	// List is items separated by the field's Sep (tags, nameservers),
	// compared as a set.
	List
	// Size is a volume size: whole GiB in the API, written "<n>G",
	// compared in bytes with PVE's value in any unit (pve-common's
	// parse_size: K, M, G, T or bytes).
	Size
	// URLLines is lines (sshkeys' public keys), written URL-encoded and
	// compared line by line after decoding (qemu-server uri_unescapes it).
	URLLines
	// Props is a property string built from a sub-table's options
	// (ipconfigN, cicustom), compared as a set of key=value pairs.
	Props
)

// Apply is how PVE applies a change of a key to a guest.
type Apply int

// The ways a change applies.
const (
	// Immediate keys are written at once, even on a running guest
	// (qemu-server's $fast_plug_option, pve-container's hotplug list).
	Immediate Apply = iota
	// Hotplug keys reach a running guest when its hotplug setting allows,
	// else wait for the next boot.
	Hotplug
	// Reboot keys wait for the next boot of a running guest.
	Reboot
	// Grows only grows (volume sizes), through PVE's resize call: a
	// smaller value is refused and named, never sent (qemu-server's
	// resize_vm dies "shrinking disks is not supported", pve-container's
	// resize_vm "unable to shrink disk size").
	Grows
	// Replaces is fixed when the guest is created: a change is refused and
	// needs a new guest.
	Replaces
)

// Field is one configuration key of a guest type: its codec, how a change
// applies, and PVE's schema default (what an absent key means; "" when
// absence means something no value says).
type Field struct {
	Key     string
	Codec   Codec
	Sep     string // List only: the separator written
	Apply   Apply
	Default string
	order   int // the row's place in its table: new options are written in it
}

// FieldTable holds a guest type's fields by PVE key.
type FieldTable map[string]Field

func tableOf(fields ...Field) FieldTable {
	t := make(FieldTable, len(fields))
	for i, f := range fields {
		f.order = i
		t[f.Key] = f
	}
	return t
}

// row finds key's row: its own, or for an indexed key (ipconfig0) the
// table's "[n]" row (ipconfig[n]), as PVE's schema names them.
func (t FieldTable) row(key string) (Field, bool) {
	if f, ok := t[key]; ok {
		return f, true
	}
	base := strings.TrimRight(key, "0123456789")
	if base == key || base == "" {
		return Field{}, false
	}
	f, ok := t[base+"[n]"]
	return f, ok
}

// keys lists the table's keys in the order its rows were written.
func (t FieldTable) keys() []string {
	keys := slices.Collect(maps.Keys(t))
	slices.SortFunc(keys, func(a, b string) int { return t[a].order - t[b].order })
	return keys
}

// QEMUFields are the keys of a QEMU guest's configuration the provider
// manages as scalar values (qemu-server's PVE::QemuServer $confdesc;
// defaults checked against PVE's API schema by TestFieldDefaults).
var QEMUFields = tableOf(
	Field{Key: "name", Codec: Text, Apply: Immediate},
	Field{Key: "tags", Codec: List, Sep: ";", Apply: Immediate},
	Field{Key: "onboot", Codec: Bool, Apply: Immediate, Default: "0"},
	Field{Key: "cores", Codec: Number, Apply: Reboot, Default: "1"},
	Field{Key: "sockets", Codec: Number, Apply: Reboot, Default: "1"},
	Field{Key: "memory", Codec: Leading, Apply: Hotplug, Default: "512"},
	Field{Key: "balloon", Codec: Number, Apply: Hotplug},
	// cputype's default (CPUConfig.pm); the schema names only the format.
	Field{Key: "cpu", Codec: Leading, Apply: Reboot, Default: "kvm64"},
	Field{Key: "numa", Codec: Bool, Apply: Reboot, Default: "0"},
	Field{Key: "agent", Codec: Leading, Apply: Reboot, Default: "0"},
	Field{Key: "protection", Codec: Bool, Apply: Immediate, Default: "0"},
	Field{Key: "tablet", Codec: Bool, Apply: Hotplug, Default: "1"},
	Field{Key: "acpi", Codec: Bool, Apply: Reboot, Default: "1"},
	// One per passed-through PCI device; options by QEMUPCIFields. A
	// device is not hotplugged (qemu-server's vmconfig_hotplug_pending
	// leaves hostpciN pending).
	Field{Key: "hostpci[n]", Codec: Props, Apply: Reboot},
	// The cloud-init keys are QEMUCloudInitFields.
)

// QEMUPCIFields are the options of hostpciN the provider manages
// (qemu-server's PCI.pm $hostpci_fmt), in the order a value lists them;
// host is the value's default key, written bare.
var QEMUPCIFields = tableOf(
	Field{Key: "host", Codec: Leading, Apply: Reboot},
	Field{Key: "mapping", Codec: Text, Apply: Reboot},
	Field{Key: "pcie", Codec: Bool, Apply: Reboot, Default: "0"},
	Field{Key: "x-vga", Codec: Bool, Apply: Reboot, Default: "0"},
)

// QEMUNICFields are the options of a QEMU guest's netN the provider manages
// (qemu-server's $net_fmt); the model is the value's own key.
var QEMUNICFields = tableOf(
	Field{Key: "bridge", Codec: Text, Apply: Hotplug},
	Field{Key: "macaddr", Codec: Text, Apply: Hotplug},
	Field{Key: "tag", Codec: Number, Apply: Hotplug},
	Field{Key: "firewall", Codec: Bool, Apply: Hotplug, Default: "0"},
	Field{Key: "mtu", Codec: Number, Apply: Hotplug},
)

// sizeKey is a volume's size option (and the parameter of PVE's resize).
const sizeKey = "size"

// QEMUDiskFields are the options of a QEMU guest's disk (scsiN, virtioN,
// sataN, ideN) the provider manages (qemu-server's drive formats).
var QEMUDiskFields = tableOf(
	Field{Key: sizeKey, Codec: Size, Apply: Grows},
)

// LXCVolumeFields are the options of a container's rootfs or mpN the
// provider manages (pve-container's $rootfs_desc and $mp_desc).
var LXCVolumeFields = tableOf(
	Field{Key: sizeKey, Codec: Size, Apply: Grows},
)

// LXCFeatureFields are the flags of a container's features the provider
// manages (pve-container's $features_desc); a change waits for the next
// start. The spec manages them together: a flag it leaves off is removed.
var LXCFeatureFields = tableOf(
	Field{Key: "nesting", Codec: Bool, Apply: Reboot, Default: "0"},
	Field{Key: "keyctl", Codec: Bool, Apply: Reboot, Default: "0"},
	Field{Key: "fuse", Codec: Bool, Apply: Reboot, Default: "0"},
)

// LXCNICFields are the options of a container's netN the provider manages
// (pve-container's $netconf_desc), in the order a new value lists them.
var LXCNICFields = tableOf(
	Field{Key: "name", Codec: Text, Apply: Hotplug},
	Field{Key: "bridge", Codec: Text, Apply: Hotplug},
	Field{Key: "ip", Codec: Text, Apply: Hotplug},
	Field{Key: "gw", Codec: Text, Apply: Hotplug},
	Field{Key: "ip6", Codec: Text, Apply: Hotplug},
	Field{Key: "gw6", Codec: Text, Apply: Hotplug},
	Field{Key: "tag", Codec: Number, Apply: Hotplug},
)

// LXCFields are the keys of a container's configuration the provider
// manages as scalar values (pve-container's PVE::LXC::Config $confdesc;
// Immediate ones are its $LXC_FASTPLUG_OPTIONS).
var LXCFields = tableOf(
	Field{Key: "hostname", Codec: Text, Apply: Immediate},
	Field{Key: "tags", Codec: List, Sep: ";", Apply: Immediate},
	Field{Key: "onboot", Codec: Bool, Apply: Immediate, Default: "0"},
	// No default: an absent cores gives the container every host core.
	Field{Key: "cores", Codec: Number, Apply: Immediate},
	Field{Key: "memory", Codec: Number, Apply: Hotplug, Default: "512"},
	Field{Key: "swap", Codec: Number, Apply: Hotplug, Default: "512"},
	Field{Key: "nameserver", Codec: List, Sep: " ", Apply: Reboot},
	Field{Key: "searchdomain", Codec: List, Sep: " ", Apply: Reboot},
	Field{Key: "unprivileged", Codec: Bool, Apply: Replaces, Default: "0"},
)

// Encode renders v (an int, int32, int64, string, bool, []string or a
// pointer to one) as key's wire value. It reports false when v does not
// manage the key: a nil pointer, an empty list, a non-pointer zero.
func (t FieldTable) Encode(key string, v any) (string, bool) {
	f, _ := t.row(key)
	enc, set := f.encode(v)
	switch {
	case set && f.Codec == Size:
		enc += "G"
	case set && f.Codec == URLLines:
		enc = urlEncode(enc)
	}
	return enc, set
}

// EncodeProps renders options by key of t (as the API holds them) as a
// property string in the table's order, leaving out those unset; "" when
// none is set. A Leading option is the value's default key, written bare.
func (t FieldTable) EncodeProps(opts map[string]any) string {
	ps := PropString{values: map[string]string{}}
	for _, k := range t.keys() {
		enc, ok := t.Encode(k, opts[k])
		switch {
		case !ok:
		case t[k].Codec == Leading:
			ps.Set("", enc)
		default:
			ps.Set(k, enc)
		}
	}
	return ps.String()
}

func (f Field) encode(v any) (string, bool) {
	switch x := v.(type) {
	case *int32:
		if x == nil {
			return "", false
		}
		return strconv.FormatInt(int64(*x), 10), true
	case *int64:
		if x == nil {
			return "", false
		}
		return strconv.FormatInt(*x, 10), true
	case *bool:
		if x == nil {
			return "", false
		}
		return pveBool(*x), true
	case *string:
		if x == nil {
			return "", false
		}
		return *x, true
	case int:
		return strconv.Itoa(x), x != 0
	case int32:
		return strconv.FormatInt(int64(x), 10), x != 0
	case int64:
		return strconv.FormatInt(x, 10), x != 0
	case bool:
		return pveBool(x), x
	case string:
		return x, x != ""
	case []string:
		return strings.Join(x, f.separator()), len(x) > 0
	}
	return "", false
}

func (f Field) separator() string {
	if f.Codec == URLLines {
		return "\n"
	}
	if f.Sep == "" {
		return " "
	}
	return f.Sep
}

// Decode reads key's wire value as an int64 (Number, a numeric Leading, a
// Size of whole GiB), a bool (Bool), a []string (List, URLLines) or a
// string.
func (t FieldTable) Decode(key, have string) any {
	f, _ := t.row(key)
	have = strings.TrimSpace(have)
	switch f.Codec {
	case Size:
		if b, ok := sizeBytes(have); ok && b%(1<<30) == 0 {
			return b >> 30
		}
	case Number:
		n, _ := strconv.ParseInt(have, 10, 64)
		return n
	case Bool:
		return boolText(have)
	case List:
		return listItems(have)
	case URLLines:
		return sshKeyLines(have)
	case Leading:
		lead := leadingValue(have)
		if n, err := strconv.ParseInt(lead, 10, 64); err == nil {
			return n
		}
		return lead
	case Text, Props: // returned as they are
	}
	return have
}

// Same reports whether the guest's value of key (have; present false when
// the config lacks the key, which then has the field's default) is what
// want asks.
func (t FieldTable) Same(key, want, have string, present bool) bool {
	f, known := t.row(key)
	if !present {
		if !known || f.Default == "" {
			return false
		}
		have = f.Default
	}
	want, have = strings.TrimSpace(want), strings.TrimSpace(have)
	if want == have {
		return true
	}
	switch f.Codec {
	case Number:
		w, errW := strconv.ParseInt(want, 10, 64)
		h, errH := strconv.ParseInt(have, 10, 64)
		return errW == nil && errH == nil && w == h
	case Bool:
		return boolText(want) == boolText(have)
	case Leading:
		return leadingValue(want) == leadingValue(have)
	case List:
		return sameSet(listItems(want), listItems(have))
	case Size:
		w, okW := sizeBytes(want)
		h, okH := sizeBytes(have)
		return okW && okH && w == h
	case URLLines:
		return slices.Equal(sshKeyLines(want), sshKeyLines(have))
	case Props:
		return sameProps(want, have)
	case Text: // verbatim, compared above
	}
	return false
}

// Grows compares want with the guest's value of a Grows key (have), both
// sizes: grow when want is larger, shrink when smaller; neither for a key
// of another mode, or when either side cannot be read (nothing is changed
// on a guess).
func (t FieldTable) Grows(key, want, have string) (grow, shrink bool) {
	if f, ok := t[key]; !ok || f.Apply != Grows || f.Codec != Size {
		return false, false
	}
	w, okW := sizeBytes(want)
	h, okH := sizeBytes(have)
	if !okW || !okH {
		return false, false
	}
	return w > h, w < h
}

// WaitsForBoot reports whether a change of key written to a running guest
// may wait for its next boot: every key but the Immediate ones (a key the
// table does not know may).
func (t FieldTable) WaitsForBoot(key string) bool {
	f, ok := t.row(key)
	return !ok || f.Apply != Immediate
}

// Importable reports whether an import describes key: not one fixed at
// creation.
func (t FieldTable) Importable(key string) bool {
	f, ok := t.row(key)
	return ok && f.Apply != Replaces
}

// leadingValue is the value of a property string's default key ("2048" of
// "2048" or "current=2048"; "host" of "host,flags=+aes" or "cputype=host";
// "1" of agent's "enabled=1").
func leadingValue(s string) string {
	ps := ParsePropString(s)
	if v, ok := ps.Get(""); ok {
		return v
	}
	for _, k := range []string{"current", "cputype", "enabled"} {
		if v, ok := ps.Get(k); ok {
			return v
		}
	}
	return ""
}

// listItems splits a list PVE accepts separated by ';', ',' or spaces
// (pve-common's pve-tag-list, address lists).
func listItems(s string) []string {
	items := strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' || r == ' ' || r == '\t' || r == '\n' })
	if items == nil {
		return []string{}
	}
	return items
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
