package proxmox

import (
	"regexp"
	"strconv"
	"strings"
)

// importedDiskKey matches the disk devices a VirtualMachine can name.
var importedDiskKey = regexp.MustCompile(`^(scsi([0-9]|[12][0-9]|30)|virtio([0-9]|1[0-5])|sata[0-5]|ide[0-3])$`)

// ImportedSpec describes a QEMU guest's configuration as it is, for a
// resource that imports the guest: Diff(ImportedSpec(cfg), cfg) is empty, so
// taking the guest under full management later writes nothing but what the
// spec is then changed to. Only what reads back unchanged is included: the
// keys of QEMUFields the guest sets, the NICs from net0 on without a gap
// (model and the options of QEMUNICFields), and disks of whole GiB (not
// CD-ROMs, cloud-init drives, or EFI and TPM state). PCI devices and
// cloud-init (QEMUCloudInitFields, a table of its own) are left out: they do not round-trip exactly, and what a spec
// leaves out is left alone.
func ImportedSpec(cfg GuestConfig) VMSpec {
	s := VMSpec{Config: importedConfig(QEMUFields, cfg)}
	for i := 0; ; i++ {
		v, ok := cfg.Effective("net" + strconv.Itoa(i))
		if !ok {
			break
		}
		s.NICs = append(s.NICs, importedNIC(ParsePropString(v)))
	}
	for key := range cfg {
		if d, ok := importedDisk(cfg, key); ok {
			if s.Disks == nil {
				s.Disks = map[string]VMDisk{}
			}
			s.Disks[key] = d
		}
	}
	return s
}

// importedConfig decodes the keys of t the guest sets.
func importedConfig(t FieldTable, cfg GuestConfig) map[string]any {
	out := map[string]any{}
	for key := range t {
		if v, ok := cfg.Effective(key); ok && t.Importable(key) {
			out[key] = t.Decode(key, v)
		}
	}
	return out
}

// importedNIC reads a netN value's model and the options QEMUNICFields
// knows (the MAC from the model key).
func importedNIC(ps PropString) VMNIC {
	model, mac, _ := nicModel(ps)
	n := VMNIC{Model: model, Options: map[string]any{}}
	for key := range QEMUNICFields {
		if v, ok := ps.Get(key); ok {
			n.Options[key] = QEMUNICFields.Decode(key, v)
		}
	}
	if mac != "" {
		n.Options["macaddr"] = mac
	}
	return n
}

// importedDisk reads one disk of the guest as a spec would name it.
func importedDisk(cfg GuestConfig, key string) (VMDisk, bool) {
	v, ok := cfg.Effective(key)
	if !ok || !importedDiskKey.MatchString(key) {
		return VMDisk{}, false
	}
	ps := ParsePropString(v)
	vol, _ := ps.Get("")
	if media, _ := ps.Get("media"); media == "cdrom" || strings.Contains(vol, "cloudinit") || vol == "none" {
		return VMDisk{}, false
	}
	sizeText, _ := ps.Get(sizeKey)
	gib, ok := QEMUDiskFields.Decode(sizeKey, sizeText).(int64)
	if !ok || gib <= 0 {
		return VMDisk{}, false
	}
	st := diskStorage(ps)
	if st == "" || strings.HasPrefix(st, "/") {
		return VMDisk{}, false
	}
	return VMDisk{Storage: st, SizeGB: int(gib)}, true
}
