package pvesim

import (
	"strings"
)

// What a guest's config means: cloud-init keys, NIC normalisation, template conversion,
// and the CPU, memory and disk limits listings report.

// ciKeyNames are the QEMU cloud-init keys; ipconfigN is matched separately.
var ciKeyNames = []string{"cicustom", "cipassword", "citype", "ciupgrade", "ciuser", "nameserver", "searchdomain", "sshkeys"}

func isCIKey(k string) bool {
	if contains(ciKeyNames, k) {
		return true
	}
	keyPrefix, _, ok := splitIndexed(k)
	return ok && keyPrefix == "ipconfig"
}

// ciKeys extracts the cloud-init keys of a config.
func ciKeys(cfg map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range cfg {
		if isCIKey(k) {
			out[k] = v
		}
	}
	return out
}

// netModels are the QEMU NIC models; "virtio=MAC" is PVE's short form for model+macaddr.
var netModels = []string{"e1000", "e1000-82540em", "e1000-82544gc", "e1000-82545em", "e1000e", "i82551", "i82557b", "i82559er", "ne2k_isa", "ne2k_pci", "pcnet", "rtl8139", "virtio", "vmxnet3"}

// normalizeNets gives every QEMU NIC a MAC and writes it as PVE does: "model=MAC,opts".
func normalizeNets(cfg map[string]string, vmid int) { normalizeNICs(cfg, vmid, normalizeNet) }

// normalizeNICs rewrites every netN value of a config with normalize.
func normalizeNICs(cfg map[string]string, vmid int, normalize func(v string, vmid, idx int) string) {
	for k, v := range cfg {
		keyPrefix, idx, ok := splitIndexed(k)
		if !ok || keyPrefix != "net" {
			continue
		}
		cfg[k] = normalize(v, vmid, idx)
	}
}

func normalizeNet(v string, vmid, idx int) string {
	m, err := parsePropertyString(qemuNetFormat, v)
	if err != nil {
		return v
	}
	model := m["model"]
	if model == "" {
		model = "virtio"
	}
	mac := m["macaddr"]
	if mac == "" {
		mac = macFor(vmid, idx)
	}
	delete(m, "model")
	delete(m, "macaddr")
	rest := formatPropertyString("", m)
	out := model + "=" + strings.ToUpper(mac)
	if rest != "" {
		out += "," + rest
	}
	return out
}

// makeTemplate marks a guest as template and renames its disks to base images.
func (s *Server) makeTemplate(g *guest) {
	for _, k := range driveKeys(g, g.Config) {
		if strings.HasPrefix(k, "unused") || (g.Kind == KindQemu && isCDROM(g.Config[k])) {
			continue
		}
		vol, opts := driveVolume(g.Config[k])
		if strings.Contains(vol, "cloudinit") {
			continue
		}
		st, v, ok := s.findVolume(g.Node, vol)
		if !ok || !strings.Contains(vol, "vm-") || strings.Contains(vol, "base-") {
			continue
		}
		newID := strings.Replace(vol, "vm-", "base-", 1)
		st.removeVolume(vol)
		v.VolID = newID
		st.addVolume(v)
		g.Config[k] = driveValue(newID, opts)
	}
	g.Config["template"] = "1"
}

// guestCPUs is cores*sockets for VMs and cores for containers (default 1).
func guestCPUs(g *guest) int {
	cfg := g.Config
	cores := atoiDefault(cfg["cores"], 1)
	if g.Kind == KindLXC {
		return cores
	}
	return cores * atoiDefault(cfg["sockets"], 1)
}

// guestMaxMem is the memory in bytes; QEMU's memory is a property string "[current=]N".
func guestMaxMem(g *guest) int64 {
	v := g.Config["memory"]
	v = strings.TrimPrefix(v, "current=")
	if i := strings.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	return int64(atoiDefault(v, 512)) * mib
}

// bootDiskCandidates are checked first so the common case needs no sort of the config.
var bootDiskCandidates = []string{"scsi0", "virtio0", "sata0", "ide0"}

// guestMaxDisk is the size of the boot disk (first disk by key order for VMs, rootfs for containers).
func guestMaxDisk(g *guest) int64 {
	if g.Kind == KindLXC {
		n, _ := sizeOption(g.Config["rootfs"])
		return n
	}
	for _, k := range bootDiskCandidates {
		if n, ok := diskSize(g.Config, k); ok {
			return n
		}
	}
	for _, k := range sortedKeys(g.Config) {
		if n, ok := diskSize(g.Config, k); ok {
			return n
		}
	}
	return 0
}
