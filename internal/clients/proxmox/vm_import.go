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
// name, cores, sockets, memory, the NICs from net0 on without a gap (model
// and bridge), and disks of whole GiB (not CD-ROMs, cloud-init drives, or
// EFI and TPM state). PCI devices and cloud-init are left out: they do not
// round-trip exactly, and what a spec leaves out is left alone.
func ImportedSpec(cfg GuestConfig) VMSpec {
	s := VMSpec{}
	s.Name, _ = cfg.Effective("name")
	s.Cores = intKey(cfg, "cores")
	s.Sockets = intKey(cfg, "sockets")
	if mem, ok := cfg.Effective("memory"); ok {
		s.MemoryMB, _ = strconv.ParseInt(firstValue(mem, "current"), 10, 64)
	}
	for i := 0; ; i++ {
		v, ok := cfg.Effective("net" + strconv.Itoa(i))
		if !ok {
			break
		}
		ps := ParsePropString(v)
		model, _, _ := nicModel(ps)
		bridge, _ := ps.Get("bridge")
		s.NICs = append(s.NICs, VMNIC{Model: model, Bridge: bridge})
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
	sizeText, _ := ps.Get("size")
	size, ok := sizeBytes(sizeText)
	if !ok || size <= 0 || size%(1<<30) != 0 {
		return VMDisk{}, false
	}
	st := diskStorage(ps)
	if st == "" || strings.HasPrefix(st, "/") {
		return VMDisk{}, false
	}
	return VMDisk{Storage: st, SizeGB: int(size >> 30)}, true
}

func intKey(cfg GuestConfig, key string) int {
	v, _ := cfg.Effective(key)
	n, _ := strconv.Atoi(strings.TrimSpace(v))
	return n
}
