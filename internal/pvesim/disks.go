package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// reSize is pve-common's parse_size: digits, an optional fraction, an optional unit.
var reSize = regexp.MustCompile(`^(\d+(?:\.\d+)?)([KMGT])?$`)

// sizeUnits are parse_size's multipliers.
var sizeUnits = map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

// maxSize is the first byte count an int64 cannot hold (2^63).
const maxSize = float64(1 << 63)

// parseSize reads PVE disk sizes as parse_size does: "32G", "512M", "1T", "4096K", or
// bytes; a bare number in an allocation ("local-lvm:32") means GiB and is handled by the
// caller. Anything else, or a size past what a byte count holds, is refused.
func parseSize(s string) (int64, bool) {
	m := reSize.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	b := f * sizeUnits[m[2]]
	if err != nil || !(b < maxSize) {
		return 0, false
	}
	return int64(b), true
}

// formatSize renders bytes the way PVE writes "size=" in configs.
func formatSize(b int64) string {
	switch {
	case b >= 1<<40 && b%(1<<40) == 0:
		return fmt.Sprintf("%dT", b>>40)
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%dG", b>>30)
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%dM", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%dK", b>>10)
	}
	return strconv.FormatInt(b, 10)
}

// diskKeyPrefixes are the QEMU config keys that hold drives.
var diskKeyPrefixes = []string{"scsi", "virtio", "sata", "ide", "efidisk", "tpmstate"}

// isQemuDiskKey reports whether a QEMU config key is a drive (scsi0, virtio3, efidisk0, ...).
func isQemuDiskKey(k string) bool {
	keyPrefix, _, ok := splitIndexed(k)
	return ok && contains(diskKeyPrefixes, keyPrefix)
}

// isLXCDiskKey reports whether a container config key is a mount (rootfs, mp0, ...).
func isLXCDiskKey(k string) bool {
	if k == "rootfs" {
		return true
	}
	keyPrefix, _, ok := splitIndexed(k)
	return ok && keyPrefix == "mp"
}

// driveVolume returns the volume part of a drive value and its other options.
func driveVolume(value string) (string, map[string]string) {
	parts := propertyParts(value)
	opts := map[string]string{}
	if len(parts) == 0 {
		return "", opts
	}
	vol := ""
	for _, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		switch {
		case !ok && vol == "":
			vol = p
		case ok && (k == "file" || k == "volume"):
			vol = v
		case ok:
			opts[k] = v
		}
	}
	return vol, opts
}

// driveValue renders a drive: volume first, then options in PVE's sorted order.
func driveValue(vol string, opts map[string]string) string {
	parts := make([]string, 0, 1+len(opts))
	parts = append(parts, vol)
	for _, k := range sortedKeys(opts) {
		parts = append(parts, k+"="+opts[k])
	}
	return strings.Join(parts, ",")
}

// isCDROM tells media=cdrom drives (and "none"/"cdrom") apart from disks.
func isCDROM(value string) bool {
	vol, opts := driveVolume(value)
	return opts["media"] == "cdrom" || vol == "none" || vol == "cdrom"
}

func diskSize(cfg map[string]string, k string) (int64, bool) {
	v, ok := cfg[k]
	if !ok || !isQemuDiskKey(k) || strings.Contains(v, "media=cdrom") {
		return 0, false
	}
	return sizeOption(v)
}

// sizeOption reads "size=" out of a drive string without a full parse; the resources
// listing calls it for every guest.
func sizeOption(v string) (int64, bool) {
	i := strings.Index(v, ",size=")
	if i < 0 {
		return 0, false
	}
	rest := v[i+len(",size="):]
	if j := strings.IndexByte(rest, ','); j >= 0 {
		rest = rest[:j]
	}
	return parseSize(rest)
}

func atoiDefault(s string, def int) int {
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return def
	}
	return n
}
