package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
)

// Property-string formats and the QEMU config parameters, written from PVE's documented
// API (qemu-server's JSON schema); only what a client can tell apart is modelled.

func propKeys(t ParamType, names ...string) map[string]PropKey {
	m := make(map[string]PropKey, len(names))
	for _, n := range names {
		m[n] = PropKey{Type: t}
	}
	return m
}

// volumeIDKeys are string keys of format pve-volume-id (qemu-server's
// $cicustom_fmt).
func volumeIDKeys(names ...string) map[string]PropKey {
	m := propKeys(TypeString, names...)
	for n, k := range m {
		k.Format = checkVolumeID
		m[n] = k
	}
	return m
}

// reVolumeID is pve-storage's parse_volume_id (PVE/Storage/Plugin.pm).
var reVolumeID = regexp.MustCompile(`(?i)^[a-z][a-z0-9\-_.]*[a-z0-9]:.+$`)

// checkVolumeID is the pve-volume-id format's check.
func checkVolumeID(v string) string {
	if reVolumeID.MatchString(v) {
		return ""
	}
	return fmt.Sprintf("unable to parse volume ID '%s'", v)
}

func mergeKeys(ms ...map[string]PropKey) map[string]PropKey {
	out := map[string]PropKey{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

var driveFormatEnum = []string{"raw", "qcow", "qed", "qcow2", "vmdk", "cloop"}

// driveCommonKeys are the keys every QEMU drive bus accepts.
func driveCommonKeys() map[string]PropKey {
	return mergeKeys(
		propKeys(TypeString, "file", "import-from", "serial", "size", "wwn", "snapshot"),
		propKeys(TypeInteger, "bps", "bps_max_length", "bps_rd", "bps_rd_max_length", "bps_wr", "bps_wr_max_length",
			"iops", "iops_max", "iops_max_length", "iops_rd", "iops_rd_max", "iops_rd_max_length", "iops_wr", "iops_wr_max", "iops_wr_max_length"),
		propKeys(TypeNumber, "mbps", "mbps_max", "mbps_rd", "mbps_rd_max", "mbps_wr", "mbps_wr_max"),
		propKeys(TypeBoolean, "backup", "detect_zeroes", "replicate", "shared", "ssd"),
		map[string]PropKey{
			"volume":         {Alias: "file"},
			"bps_rd_length":  {Alias: "bps_rd_max_length"},
			"bps_wr_length":  {Alias: "bps_wr_max_length"},
			"iops_rd_length": {Alias: "iops_rd_max_length"},
			"iops_wr_length": {Alias: "iops_wr_max_length"},
			"aio":            {Type: TypeString, Enum: []string{"native", "threads", "io_uring"}},
			"cache":          {Type: TypeString, Enum: []string{"none", "writethrough", "writeback", "unsafe", "directsync"}},
			"discard":        {Type: TypeString, Enum: []string{"ignore", "on"}},
			"format":         {Type: TypeString, Enum: driveFormatEnum},
			"media":          {Type: TypeString, Enum: []string{"cdrom", "disk"}},
			"rerror":         {Type: TypeString, Enum: []string{"ignore", "report", "stop"}},
			"werror":         {Type: TypeString, Enum: []string{"enospc", "ignore", "report", "stop"}},
		},
	)
}

var (
	scsiFormat = &PropFormat{DefaultKey: "file", Keys: mergeKeys(driveCommonKeys(),
		propKeys(TypeString, "product", "vendor"), propKeys(TypeInteger, "queues"), propKeys(TypeBoolean, "iothread", "ro", "scsiblock"))}
	virtioFormat = &PropFormat{DefaultKey: "file", Keys: mergeKeys(driveCommonKeys(), propKeys(TypeBoolean, "iothread", "ro"))}
	sataFormat   = &PropFormat{DefaultKey: "file", Keys: driveCommonKeys()}
	ideFormat    = &PropFormat{DefaultKey: "file", Keys: mergeKeys(driveCommonKeys(), propKeys(TypeString, "model"))}
	efiFormat    = &PropFormat{DefaultKey: "file", Keys: mergeKeys(propKeys(TypeString, "file", "import-from", "size"),
		propKeys(TypeBoolean, "pre-enrolled-keys"), map[string]PropKey{
			"volume":  {Alias: "file"},
			"efitype": {Type: TypeString, Enum: []string{"2m", "4m"}},
			"format":  {Type: TypeString, Enum: driveFormatEnum},
			"ms-cert": {Type: TypeString, Enum: []string{"2011", "2023", "2023w", "2023k"}},
		})}
	tpmFormat = &PropFormat{DefaultKey: "file", Keys: mergeKeys(propKeys(TypeString, "file", "import-from", "size"), map[string]PropKey{
		"volume":  {Alias: "file"},
		"format":  {Type: TypeString, Enum: []string{"raw", "qcow2", "vmdk"}},
		"version": {Type: TypeString, Enum: []string{"v1.2", "v2.0"}},
	})}
	qemuNetFormat = func() *PropFormat {
		keys := mergeKeys(propKeys(TypeString, "bridge", "macaddr", "trunks"), propKeys(TypeInteger, "mtu", "queues", "tag"),
			propKeys(TypeNumber, "rate"), propKeys(TypeBoolean, "firewall", "link_down"),
			map[string]PropKey{"model": {Type: TypeString, Enum: netModels}})
		for _, m := range netModels {
			keys[m] = PropKey{Alias: "macaddr", KeyAlias: "model"}
		}
		return &PropFormat{DefaultKey: "model", Keys: keys}
	}()
	agentFormat = &PropFormat{DefaultKey: "enabled", Keys: mergeKeys(propKeys(TypeBoolean, "enabled", "freeze-fs", "fstrim_cloned_disks"),
		map[string]PropKey{
			"freeze-fs-on-backup": {Alias: "freeze-fs"},
			"guest-fsfreeze":      {Alias: "freeze-fs"},
			"type":                {Type: TypeString, Enum: []string{"virtio", "isa"}},
		})}
	memoryFormat   = &PropFormat{DefaultKey: "current", Keys: propKeys(TypeInteger, "current")}
	ipconfigFormat = &PropFormat{Keys: propKeys(TypeString, "gw", "gw6", "ip", "ip6")}
	cicustomFormat = &PropFormat{Keys: volumeIDKeys("meta", "network", "user", "vendor")}
	startupFormat  = &PropFormat{DefaultKey: "order", Keys: propKeys(TypeInteger, "order", "up", "down")}
	vgaFormat      = &PropFormat{DefaultKey: "type", Keys: mergeKeys(propKeys(TypeInteger, "memory"), map[string]PropKey{
		"type":      {Type: TypeString, Enum: []string{"cirrus", "qxl", "qxl2", "qxl3", "qxl4", "none", "serial0", "serial1", "serial2", "serial3", "std", "virtio", "virtio-gl", "vmware"}},
		"clipboard": {Type: TypeString, Enum: []string{"vnc"}},
	})}
	machineFormat = &PropFormat{DefaultKey: "type", Keys: mergeKeys(propKeys(TypeString, "type"), propKeys(TypeNumber, "aw-bits"),
		propKeys(TypeBoolean, "enable-s3", "enable-s4"), map[string]PropKey{"viommu": {Type: TypeString, Enum: []string{"intel", "virtio"}}})}
	unusedFormat = &PropFormat{DefaultKey: "file", Keys: map[string]PropKey{"file": {Type: TypeString}, "volume": {Alias: "file"}}}
	usbFormat    = &PropFormat{DefaultKey: "host", Keys: mergeKeys(propKeys(TypeString, "host", "mapping"), propKeys(TypeBoolean, "usb3"))}
	audioFormat  = &PropFormat{Keys: map[string]PropKey{
		"device": {Type: TypeString, Enum: []string{"ich9-intel-hda", "intel-hda", "AC97"}},
		"driver": {Type: TypeString, Enum: []string{"spice", "none"}},
	}}
	rngFormat   = &PropFormat{DefaultKey: "source", Keys: mergeKeys(propKeys(TypeInteger, "max_bytes", "period"), map[string]PropKey{"source": {Type: TypeString, Enum: []string{"/dev/urandom", "/dev/random", "/dev/hwrng"}}})}
	numaNFormat = &PropFormat{Keys: mergeKeys(propKeys(TypeString, "cpus", "hostnodes"), propKeys(TypeNumber, "memory"),
		map[string]PropKey{"policy": {Type: TypeString, Enum: []string{"preferred", "bind", "interleave"}}})}
	smbiosFormat = &PropFormat{Keys: mergeKeys(propKeys(TypeString, "family", "manufacturer", "product", "serial", "sku", "uuid", "version"), propKeys(TypeBoolean, "base64"))}
	cpuFormat    = &PropFormat{DefaultKey: "cputype", Keys: mergeKeys(propKeys(TypeString, "cputype", "flags", "hv-vendor-id", "phys-bits", "reported-model"),
		propKeys(TypeInteger, "guest-phys-bits"), propKeys(TypeBoolean, "hidden"))}
)

// qemuConfigParams are the config keys shared by create, POST config and PUT config.
func qemuConfigParams() []ParamSpec {
	return []ParamSpec{
		pBool("acpi"), pString("affinity"), pProp("agent", agentFormat), pBool("allow-ksm"), pString("amd-sev"),
		pEnum("arch", "x86_64", "aarch64"), pString("args"), pProp("audio0", audioFormat), pBool("autostart"),
		pInt("balloon").min(0), pEnum("bios", "seabios", "ovmf"), pString("boot"), pString("bootdisk"), pString("cdrom"),
		pProp("cicustom", cicustomFormat), pString("cipassword"), pEnum("citype", "configdrive2", "nocloud", "opennebula"),
		pBool("ciupgrade"), pString("ciuser"), pInt("cores").min(1), pProp("cpu", cpuFormat), pNumber("cpulimit").min(0).max(128),
		pInt("cpuunits").min(1).max(262144), pString("description"), pProp("efidisk0", efiFormat), pBool("force"), pBool("freeze"),
		pString("hookscript"), pString("hostpci").indexed(0, 15), pString("hotplug"), pEnum("hugepages", "any", "2", "1024"),
		pProp("ide", ideFormat).indexed(0, 3), pString("import-working-storage"), pString("intel-tdx"),
		pProp("ipconfig", ipconfigFormat).indexed(0, 31), pString("ivshmem"), pBool("keephugepages"),
		pEnum("keyboard", "de", "de-ch", "da", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch", "hu", "is", "it", "ja", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "sv", "sl", "tr"),
		pBool("kvm"), pBool("localtime"),
		pEnum("lock", "backup", "clone", "create", "migrate", "rollback", "snapshot", "snapshot-delete", "suspending", "suspended"),
		pProp("machine", machineFormat), pProp("memory", memoryFormat), pNumber("migrate_downtime").min(0), pInt("migrate_speed").min(0),
		pDNSName("name"), pString("nameserver"), pProp("net", qemuNetFormat).indexed(0, 31),
		pBool("numa"), pProp("numa", numaNFormat).indexed(0, 7), pBool("onboot"),
		pEnum("ostype", "other", "wxp", "w2k", "w2k3", "w2k8", "wvista", "win7", "win8", "win10", "win11", "l24", "l26", "solaris"),
		pString("parallel").indexed(0, 2), pBool("protection"), pBool("reboot"), pProp("rng0", rngFormat),
		pProp("sata", sataFormat).indexed(0, 5), pProp("scsi", scsiFormat).indexed(0, 30),
		pEnum("scsihw", "lsi", "lsi53c810", "virtio-scsi-pci", "virtio-scsi-single", "megasas", "pvscsi"),
		pString("searchdomain"), pString("serial").indexed(0, 3).pattern(`/dev/.+|socket`), pInt("shares").min(0).max(50000),
		pProp("smbios1", smbiosFormat), pInt("smp").min(1), pInt("sockets").min(1), pString("spice_enhancements"),
		pString("sshkeys"), pString("startdate"), pProp("startup", startupFormat), pBool("tablet"), pString("tags"), pBool("tdf"),
		pBool("template"), pProp("tpmstate0", tpmFormat), pProp("unused", unusedFormat).indexed(0, 255),
		pProp("usb", usbFormat).indexed(0, 29), pInt("vcpus").min(1), pProp("vga", vgaFormat),
		pProp("virtio", virtioFormat).indexed(0, 15), pString("virtiofs").indexed(0, 9), pString("vmgenid"),
		pString("vmstatestorage"), pString("watchdog"),
	}
}

// qemuParamTypes maps config keys to their schema type for typing GET config output.
var qemuParamTypes = func() *paramSet { return compileParams(qemuConfigParams()) }()

// diskEnum is the resize/template "disk" enumeration.
func diskEnum() []string {
	var out []string
	add := func(prefix string, n int) {
		for i := 0; i <= n; i++ {
			out = append(out, prefix+strconv.Itoa(i))
		}
	}
	add("ide", 3)
	add("scsi", 30)
	add("virtio", 15)
	add("sata", 5)
	out = append(out, "efidisk0", "tpmstate0")
	return out
}
