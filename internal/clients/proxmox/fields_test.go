package proxmox

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/testenv/pveschema"
)

// schemaProp is the part of a parameter of PVE's API schema this test reads.
type schemaProp struct {
	Type       string                `json:"type"`
	Default    any                   `json:"default"`
	DefaultKey any                   `json:"default_key"`
	Format     json.RawMessage       `json:"format"`
	Typetext   string                `json:"typetext"`
	formatKeys map[string]schemaProp // Format when it is a property string's keys
}

// typetextKey is one option of a property string's typetext ("ip=<...>",
// the default key "[host=]<...>").
var typetextKey = regexp.MustCompile(`([a-z0-9-]+)=\]?<([^>]*)>`)

// typetextKeys are the options a named format (pve-qm-ipconfig,
// pve-qm-cicustom, pve-qm-hostpci: the schema dump does not expand it)
// lists in its typetext: "<1|0>" a boolean, else a string, without a
// default (the dump gives no more). For the tables over these formats the
// schema test therefore checks only that each key exists and, for a boolean,
// its type: their defaults and other types are not in the dump to check.
func typetextKeys(p schemaProp) map[string]schemaProp {
	keys := map[string]schemaProp{}
	for _, m := range typetextKey.FindAllStringSubmatch(p.Typetext, -1) {
		typ := "string"
		if m[2] == "1|0" {
			typ = "boolean"
		}
		keys[m[1]] = schemaProp{Type: typ}
	}
	return keys
}

type schemaTree struct {
	Path string `json:"path"`
	Info map[string]struct {
		Parameters struct {
			Properties map[string]schemaProp `json:"properties"`
		} `json:"parameters"`
	} `json:"info"`
	Children []schemaTree `json:"children"`
}

// schemaConfigParams returns the parameters of PUT path in PVE's schema.
func schemaConfigParams(t *testing.T, roots []schemaTree, path string) map[string]schemaProp {
	t.Helper()
	var find func([]schemaTree) map[string]schemaProp
	find = func(nodes []schemaTree) map[string]schemaProp {
		for _, n := range nodes {
			if n.Path == path {
				return n.Info["PUT"].Parameters.Properties
			}
			if p := find(n.Children); p != nil {
				return p
			}
		}
		return nil
	}
	props := find(roots)
	if props == nil {
		t.Fatalf("PVE's schema has no PUT %s", path)
	}
	for k, p := range props {
		if json.Unmarshal(p.Format, &p.formatKeys) != nil {
			p.formatKeys = typetextKeys(p)
		}
		props[k] = p
	}
	return props
}

// schemaDefault is what an absent key means by PVE's schema: the default
// of the key or of its property string's default key; a boolean without
// one is false (Perl reads the absent value as false).
func schemaDefault(p schemaProp) string {
	d := p.Default
	for _, sub := range p.formatKeys {
		if sub.DefaultKey != nil && d == nil {
			d, p.Type = sub.Default, sub.Type
		}
	}
	switch v := d.(type) {
	case nil:
		if p.Type == "boolean" {
			return "0"
		}
		return ""
	case float64:
		return fmt.Sprint(int64(v))
	}
	return fmt.Sprint(d)
}

// Every key of the field tables exists in PVE's API schema with the default
// the table gives it, so the diff reads an absent key as PVE does.
func TestFieldDefaultsPVESchema(t *testing.T) {
	var roots []schemaTree
	if err := json.Unmarshal(pveschema.Read(t), &roots); err != nil {
		t.Fatalf("cannot parse PVE's API schema: %v", err)
	}
	qemu := schemaConfigParams(t, roots, "/nodes/{node}/qemu/{vmid}/config")
	lxc := schemaConfigParams(t, roots, "/nodes/{node}/lxc/{vmid}/config")
	tables := map[string]struct {
		table  FieldTable
		schema map[string]schemaProp
	}{
		"QEMUFields":    {QEMUFields, qemu},
		"QEMUNICFields": {QEMUNICFields, qemu["net[n]"].formatKeys},
		"LXCFields":     {LXCFields, lxc},
		"LXCNICFields":  {LXCNICFields, lxc["net[n]"].formatKeys},
		// The scsiN drive format holds the options every drive has.
		"QEMUDiskFields":   {QEMUDiskFields, qemu["scsi[n]"].formatKeys},
		"LXCVolumeFields":  {LXCVolumeFields, lxc["rootfs"].formatKeys},
		"LXCFeatureFields": {LXCFeatureFields, lxc["features"].formatKeys},
		// The cloud-init drive's keys and the options of two of them.
		"QEMUCloudInitFields": {QEMUCloudInitFields, qemu},
		"QEMUIPConfigFields":  {QEMUIPConfigFields, qemu["ipconfig[n]"].formatKeys},
		"QEMUCICustomFields":  {QEMUCICustomFields, qemu["cicustom"].formatKeys},
		"QEMUPCIFields":       {QEMUPCIFields, qemu["hostpci[n]"].formatKeys},
	}
	// cpu's schema names a format (pve-vm-cpu-conf) without its keys:
	// qemu-server's CPUConfig.pm gives cputype's default, kvm64.
	notInSchema := map[string]bool{"QEMUFields/cpu": true}
	for name, tc := range tables {
		for key, f := range tc.table {
			t.Run(name+"/"+key, func(t *testing.T) {
				p, ok := tc.schema[key]
				if !ok {
					t.Fatalf("PVE's schema has no %s", key)
				}
				if notInSchema[name+"/"+key] {
					return
				}
				if diff := cmp.Diff(schemaDefault(p), f.Default); diff != "" {
					t.Errorf("default of %s: -PVE's schema, +table:\n%s", key, diff)
				}
				if want := map[Codec]string{Number: "integer", Bool: "boolean", Size: "string", URLLines: "string", Props: "string"}[f.Codec]; want != "" && p.Type != want {
					t.Errorf("%s is a %s in PVE's schema, the table's codec wants %s", key, p.Type, want)
				}
			})
		}
	}
}

// Decode reads back what Encode wrote, and Same holds between them, for
// every codec.
func TestFieldRoundTrip(t *testing.T) {
	cases := map[string]struct {
		reason string
		table  FieldTable
		key    string
		value  any
		want   any
	}{
		"Number":  {reason: "An int32 comes back as an int64.", table: QEMUFields, key: "cores", value: int32(4), want: int64(4)},
		"Bool":    {reason: "A *bool comes back as a bool.", table: QEMUFields, key: "numa", value: ptrTo(true), want: true},
		"Leading": {reason: "The CPU type is the default key of cpu.", table: QEMUFields, key: "cpu", value: "host", want: "host"},
		"List":    {reason: "Tags are ;-separated.", table: LXCFields, key: "tags", value: []string{"a", "b"}, want: []string{"a", "b"}},
		"Text":    {reason: "A name is itself.", table: LXCFields, key: "hostname", value: "web", want: "web"},
		"Size":    {reason: "A disk size is whole GiB, written with G.", table: QEMUDiskFields, key: "size", value: int(20), want: int64(20)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			enc, ok := tc.table.Encode(tc.key, tc.value)
			if !ok {
				t.Fatalf("%s\nEncode(%v) does not manage %s", tc.reason, tc.value, tc.key)
			}
			if diff := cmp.Diff(tc.want, tc.table.Decode(tc.key, enc)); diff != "" {
				t.Errorf("%s\nDecode(Encode(v)): -want, +got:\n%s", tc.reason, diff)
			}
			if !tc.table.Same(tc.key, enc, enc, true) {
				t.Errorf("%s\nSame(%q, %q) is false", tc.reason, enc, enc)
			}
		})
	}
}

func TestFieldSame(t *testing.T) {
	cases := map[string]struct {
		reason  string
		key     string
		want    string
		have    string
		present bool
		same    bool
	}{
		"AbsentHasDefault":   {reason: "An absent onboot is 0.", key: "onboot", want: "0", same: true},
		"AbsentNoDefault":    {reason: "An absent balloon is not 0 (ballooning stays on).", key: "balloon", want: "0"},
		"TagsAsSet":          {reason: "PVE may reorder tags or use another separator.", key: "tags", want: "b;a", have: "a,b", present: true, same: true},
		"LeadingKeepsFlags":  {reason: "cpu flags are not the type.", key: "cpu", want: "host", have: "cputype=host,flags=+aes", present: true, same: true},
		"MemoryCurrent":      {reason: "PVE 9 writes memory as current=.", key: "memory", want: "2048", have: "current=2048", present: true, same: true},
		"NumberDiffers":      {reason: "A different count differs.", key: "cores", want: "4", have: "2", present: true},
		"BoolSpellings":      {reason: "PVE's booleans accept yes/on.", key: "numa", want: "1", have: "on", present: true, same: true},
		"UnknownAbsentDiffs": {reason: "A key the table does not know has no default.", key: "hookscript", want: "x"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := QEMUFields.Same(tc.key, tc.want, tc.have, tc.present); got != tc.same {
				t.Errorf("%s\nSame(%q, %q, %q, %t) = %t, want %t", tc.reason, tc.key, tc.want, tc.have, tc.present, got, tc.same)
			}
		})
	}
}

// A Grows key (a volume's size) grows and is never shrunk: the comparison
// is in bytes, whatever unit PVE wrote.
func TestFieldGrows(t *testing.T) {
	cases := map[string]struct {
		reason       string
		table        FieldTable
		key          string
		want, have   string
		grow, shrink bool
	}{
		"Larger":      {reason: "20G on an 8G disk grows it.", table: QEMUDiskFields, key: "size", want: "20G", have: "8G", grow: true},
		"Smaller":     {reason: "4G on an 8G disk would shrink it.", table: QEMUDiskFields, key: "size", want: "4G", have: "8G", shrink: true},
		"OtherUnit":   {reason: "PVE may write the size in M.", table: LXCVolumeFields, key: "size", want: "8G", have: "8192M"},
		"Unreadable":  {reason: "An unknown size changes nothing.", table: LXCVolumeFields, key: "size", want: "8G", have: ""},
		"NotGrowOnly": {reason: "A key of another mode neither grows nor shrinks.", table: QEMUFields, key: "cores", want: "4", have: "2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			grow, shrink := tc.table.Grows(tc.key, tc.want, tc.have)
			if diff := cmp.Diff([2]bool{tc.grow, tc.shrink}, [2]bool{grow, shrink}); diff != "" {
				t.Errorf("%s\nGrows(%q, %q, %q) [grow shrink]: -want, +got:\n%s", tc.reason, tc.key, tc.want, tc.have, diff)
			}
		})
	}
}

// A volume's size row only grows: a smaller size is a refusal naming the
// volume, never a resize, for a VM's disk and a container's rootfs alike.
func TestGrowsOnlyVolumeSizes(t *testing.T) {
	vm := Diff(VMSpec{Disks: map[string]VMDisk{"scsi0": {Storage: "local-lvm", SizeGB: 4}}},
		cfgOf(map[string]string{"scsi0": "local-lvm:base-9000-disk-0/vm-100-disk-0,size=8192M"}))
	want := VMPlan{Set: map[string]string{}, NewDisks: map[string]string{},
		Refused: []string{"disk scsi0 is 8192M, the spec asks for 4G: disks are never shrunk"}}
	if diff := cmp.Diff(want, vm); diff != "" {
		t.Errorf("a clone's boot disk asked smaller than the template's: -want, +got:\n%s", diff)
	}
	ct := DiffLXC(LXCSpec{RootFS: &LXCVolume{Storage: "local-lvm", SizeGB: 16}},
		cfgOf(map[string]string{"rootfs": "local-lvm:vm-200-disk-0,size=8G"}))
	wantCT := LXCPlan{Set: map[string]string{}, Resizes: []Resize{{Disk: "rootfs", Size: "16G"}}, Fields: []string{"rootfs"}}
	if diff := cmp.Diff(wantCT, ct); diff != "" {
		t.Errorf("a container's rootfs asked larger: -want, +got:\n%s", diff)
	}
}
