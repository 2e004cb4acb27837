package proxmox

import (
	"net/url"
	"strings"
)

// QEMUCloudInitFields are the keys of a QEMU guest's configuration that
// live on its cloud-init drive (qemu-server's $confdesc_cloudinit). PVE
// never lists them in /pending: a change on a running guest reaches it when
// the drive is regenerated at the next boot, hence Reboot.
var QEMUCloudInitFields = tableOf(
	Field{Key: "ciuser", Codec: Text, Apply: Reboot},
	// Write-only: GET config returns '**********' for it (qemu-server's
	// API2/Qemu.pm vm_config, "hide cloudinit password"), so it is never
	// compared; the controller writes it apart when its Secret or
	// generation moves (virtualmachine's passwordNeedsApply).
	Field{Key: "cipassword", Codec: Text, Apply: Reboot},
	Field{Key: "sshkeys", Codec: URLLines, Apply: Reboot},
	Field{Key: "searchdomain", Codec: Text, Apply: Reboot},
	Field{Key: "nameserver", Codec: List, Sep: " ", Apply: Reboot},
	Field{Key: "ciupgrade", Codec: Bool, Apply: Reboot, Default: "1"},
	Field{Key: "citype", Codec: Text, Apply: Reboot},
	// Options by QEMUCICustomFields.
	Field{Key: "cicustom", Codec: Props, Apply: Reboot},
	// One per interface; options by QEMUIPConfigFields.
	Field{Key: "ipconfig[n]", Codec: Props, Apply: Reboot},
)

// QEMUIPConfigFields are the options of ipconfigN (qemu-server's
// $ipconfig_fmt), in the order a value lists them.
var QEMUIPConfigFields = tableOf(
	Field{Key: "ip", Codec: Text, Apply: Reboot},
	Field{Key: "gw", Codec: Text, Apply: Reboot},
	Field{Key: "ip6", Codec: Text, Apply: Reboot},
	Field{Key: "gw6", Codec: Text, Apply: Reboot},
)

// QEMUCICustomFields are the snippet volumes cicustom names (qemu-server's
// $cicustom_fmt), in the order a value lists them.
var QEMUCICustomFields = tableOf(
	Field{Key: "user", Codec: Text, Apply: Reboot},
	Field{Key: "meta", Codec: Text, Apply: Reboot},
	Field{Key: "network", Codec: Text, Apply: Reboot},
	Field{Key: "vendor", Codec: Text, Apply: Reboot},
)

// IsCloudInitKey reports whether a config key lives on the cloud-init drive.
func IsCloudInitKey(k string) bool {
	_, ok := QEMUCloudInitFields.row(k)
	return ok
}

// qemuTable is the table that knows a QEMU key: the cloud-init drive's or
// the guest's own.
func qemuTable(key string) FieldTable {
	if IsCloudInitKey(key) {
		return QEMUCloudInitFields
	}
	return QEMUFields
}

// urlEncode renders lines the way PVE's sshkeys wants them: URL-encoded
// with %20 for spaces (PVE rejects '+').
func urlEncode(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// sshKeyLines decodes an sshkeys value (URL-encoded or not) into its
// non-empty lines.
func sshKeyLines(s string) []string {
	if d, err := url.PathUnescape(s); err == nil {
		s = d
	}
	lines := []string{}
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
