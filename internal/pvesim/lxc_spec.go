package pvesim

import "strconv"

// Property-string formats and config parameters of LXC containers, written from PVE's
// documented API (pve-container's JSON schema); only what a client can tell apart is modelled.

var (
	lxcNetFormat = &PropFormat{Keys: mergeKeys(
		propKeys(TypeString, "bridge", "gw", "gw6", "hwaddr", "ip", "ip6", "name", "trunks"),
		propKeys(TypeInteger, "mtu", "tag"), propKeys(TypeNumber, "rate"),
		propKeys(TypeBoolean, "firewall", "host-managed", "link_down"),
		map[string]PropKey{"type": {Type: TypeString, Enum: []string{"veth"}}},
	)}
	lxcRootfsFormat = &PropFormat{DefaultKey: "volume", Keys: mergeKeys(
		propKeys(TypeString, "mountoptions", "size", "volume"),
		propKeys(TypeBoolean, "acl", "quota", "replicate", "ro", "shared"),
	)}
	lxcMountFormat = &PropFormat{DefaultKey: "volume", Keys: mergeKeys(
		propKeys(TypeString, "mountoptions", "mp", "size", "volume"),
		propKeys(TypeBoolean, "acl", "backup", "keepattrs", "quota", "replicate", "ro", "shared"),
	)}
	lxcFeaturesFormat = &PropFormat{Keys: mergeKeys(propKeys(TypeString, "mount"),
		propKeys(TypeBoolean, "force_rw_sys", "fuse", "keyctl", "mknod", "nesting"))}
	lxcDevFormat = &PropFormat{DefaultKey: "path", Keys: mergeKeys(propKeys(TypeString, "mode", "path"),
		propKeys(TypeInteger, "gid", "uid"), propKeys(TypeBoolean, "deny-write"))}
	lxcUnusedFormat = &PropFormat{DefaultKey: "volume", Keys: propKeys(TypeString, "volume")}
)

// lxcLocks are the container config locks PVE knows.
var lxcLocks = []string{"backup", "create", "destroyed", "disk", "fstrim", "migrate", "mounted", "rollback", "snapshot", "snapshot-delete"}

// lxcConfigParams are the config keys shared by create and PUT config.
func lxcConfigParams() []ParamSpec {
	return []ParamSpec{
		pEnum("arch", "amd64", "i386", "arm64", "armhf", "riscv32", "riscv64"),
		pEnum("cmode", "shell", "console", "tty"), pBool("console"), pInt("cores").min(1).max(8192),
		pNumber("cpulimit").min(0).max(8192), pInt("cpuunits").min(0).max(500000), pBool("debug"),
		pString("description"), pProp("dev", lxcDevFormat).indexed(0, 255),
		pString("entrypoint"), pString("env"), pProp("features", lxcFeaturesFormat), pString("hookscript"),
		pString("hostname").pattern(`[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)*`),
		pEnum("lock", lxcLocks...), pInt("memory").min(16), pProp("mp", lxcMountFormat).indexed(0, 255),
		pString("nameserver"), pProp("net", lxcNetFormat).indexed(0, 31), pBool("onboot"),
		pEnum("ostype", "debian", "devuan", "ubuntu", "centos", "fedora", "opensuse", "archlinux", "alpine", "gentoo", "nixos", "unmanaged"),
		pBool("protection"), pProp("rootfs", lxcRootfsFormat), pString("searchdomain"), pProp("startup", startupFormat),
		pInt("swap").min(0), pString("tags"), pBool("template"), pString("timezone"), pInt("tty").min(0).max(6),
		pBool("unprivileged"), pProp("unused", lxcUnusedFormat).indexed(0, 255),
	}
}

// lxcCreateParams are POST /nodes/{node}/lxc's parameters.
func lxcCreateParams() []ParamSpec {
	return append(lxcConfigParams(), pNode(), pVMID(), pString("ostemplate").req(),
		pString("password"), pString("ssh-public-keys"), pString("storage"), pBool("force"), pBool("restore"),
		pString("pool"), pBool("ignore-unpack-errors"), pNumber("bwlimit").min(0), pBool("start"),
		pBool("unique"), pBool("ha-managed"))
}

// lxcUpdateParams are PUT config's parameters.
func lxcUpdateParams() []ParamSpec {
	return append(lxcConfigParams(), pNode(), pVMID(), pString("delete"), pString("revert"), pString("digest"))
}

// lxcParamTypes types GET config output: integers and booleans are JSON numbers there.
var lxcParamTypes = compileParams(lxcConfigParams())

// lxcDiskEnum is resize's "disk" enumeration: rootfs and mp0..mp255.
func lxcDiskEnum() []string {
	out := []string{"rootfs"}
	for i := 0; i <= 255; i++ {
		out = append(out, "mp"+strconv.Itoa(i))
	}
	return out
}

// lxcFastplug are the keys pve-container writes straight into the config of a running
// container ($LXC_FASTPLUG_OPTIONS); cpulimit, cpuunits, memory, swap and netN are
// hot-plugged, a new mpN or devN too (not over an existing one). Every other change waits
// in the pending section until the next start.
var lxcFastplug = map[string]bool{
	"description": true, "onboot": true, "startup": true, "protection": true, "hostname": true,
	"hookscript": true, "cores": true, "tags": true, "lock": true,
}

var lxcCgroupKeys = map[string]bool{"cpulimit": true, "cpuunits": true, "memory": true, "swap": true}

// lxcHotpluggable reports whether setting key on a running container applies at once.
func lxcHotpluggable(cfg map[string]string, key string) bool {
	if lxcFastplug[key] || lxcCgroupKeys[key] {
		return true
	}
	keyPrefix, _, ok := splitIndexed(key)
	if !ok {
		return false
	}
	_, exists := cfg[key]
	return keyPrefix == "net" || ((keyPrefix == "mp" || keyPrefix == "dev") && !exists)
}

// lxcHotDeletable reports whether deleting key from a running container applies at once.
func lxcHotDeletable(key string) bool {
	if lxcFastplug[key] || lxcCgroupKeys[key] {
		return true
	}
	keyPrefix, _, ok := splitIndexed(key)
	return ok && keyPrefix == "net"
}
