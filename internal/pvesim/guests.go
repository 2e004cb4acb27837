package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var reAllocSyntax = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9\-_.]*):(\d+(?:\.\d+)?)$`)

// What both guest kinds share: allocating drives on create and update, freeing a
// guest's volumes, MAC addresses, the per-node guest list and the config lock check.

// allocDrive turns an allocation request in a drive value ("local-lvm:32",
// "local-lvm:cloudinit", "local-lvm:0,import-from=...") into a real volume and returns the
// value PVE would write. Values naming existing volumes are registered and kept.
func (s *Server) allocDrive(g *guest, key, value string) (string, error) {
	vol, opts := driveVolume(value)
	if vol == "" || vol == "none" || vol == "cdrom" || strings.HasPrefix(vol, "/") {
		return value, nil
	}
	content := "images"
	if g.Kind == KindLXC {
		content = "rootdir"
	}
	if m := reAllocSyntax.FindStringSubmatch(vol); m != nil {
		return s.allocNewDrive(g, m[1], m[2], opts, content)
	}
	stID, name, ok := splitVolID(vol)
	if ok && name == "cloudinit" {
		v, err := s.allocNamed(g.Node, stID, g.VMID, fmt.Sprintf("vm-%d-cloudinit", g.VMID), 4*mib, "images")
		if err != nil {
			return "", err
		}
		opts["media"] = "cdrom"
		return driveValue(v.VolID, opts), nil
	}
	if ok && contentOf(vol) == content {
		size, _ := parseSize(opts["size"])
		if size == 0 {
			size = 8 * gib
			opts["size"] = formatSize(size)
		}
		s.ensureVolume(g.Node, vol, size, g.VMID, content)
		return driveValue(vol, opts), nil
	}
	if ok {
		if _, _, found := s.findVolume(g.Node, vol); !found {
			return "", missingVolume(g, key, vol)
		}
	}
	return value, nil
}

// missingVolume is the refusal of a drive naming a volume that does not exist: qemu-server's
// create_disks dies "volume <volid> does not exist" (volume_size_info found nothing).
func missingVolume(g *guest, key, vol string) error {
	if g.Kind == KindQemu {
		return errInternal("volume %s does not exist", vol)
	}
	return errParam(key, fmt.Sprintf("volume '%s' does not exist", vol))
}

func (s *Server) allocNewDrive(g *guest, stID, sizeGiB string, opts map[string]string, content string) (string, error) {
	gb, _ := strconv.ParseFloat(sizeGiB, 64)
	size := int64(gb * float64(gib))
	if src := opts["import-from"]; src != "" {
		sv, ok := s.importSource(g.Node, src)
		if !ok {
			return "", errInternal("volume '%s' does not exist", src)
		}
		size = max(size, sv.Size)
		delete(opts, "import-from")
	}
	if size == 0 {
		size = 4 * gib
	}
	v, err := s.allocDisk(g.Node, stID, g.VMID, size, content)
	if err != nil {
		return "", err
	}
	opts["size"] = formatSize(size)
	return driveValue(v.VolID, opts), nil
}

// driveKeys lists a guest's disk keys.
func driveKeys(g *guest, cfg map[string]string) []string {
	var keys []string
	for _, k := range sortedKeys(cfg) {
		if (g.Kind == KindQemu && isQemuDiskKey(k)) || (g.Kind == KindLXC && isLXCDiskKey(k)) || strings.HasPrefix(k, "unused") {
			keys = append(keys, k)
		}
	}
	return keys
}

// freeGuestVolumes deletes every volume a config references.
func (s *Server) freeGuestVolumes(g *guest) {
	for _, k := range driveKeys(g, g.Config) {
		vol, _ := driveVolume(g.Config[k])
		if vmidOfVolume(vol) == g.VMID || strings.Contains(vol, "cloudinit") {
			s.freeVolume(g.Node, vol)
		}
	}
}

// macFor is a stable MAC in Proxmox's BC:24:11 range.
func macFor(vmid, idx int) string {
	return fmt.Sprintf("BC:24:11:%02X:%02X:%02X", (vmid>>8)&0xff, vmid&0xff, idx&0xff)
}

// listGuests lists a node's guests of one kind in VMID order, one row each.
func (s *Server) listGuests(node, kind string, row func(*guest) map[string]any) (any, error) {
	if err := s.checkNode(node); err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, g := range s.orderedGuests() {
		if g.Kind == kind && g.Node == node {
			out = append(out, row(g))
		}
	}
	return out, nil
}

// checkLock fails like AbstractConfig::check_lock (both guest kinds) unless skiplock is set.
func checkLock(g *guest, r *request) error {
	if l := g.lock(); l != "" && !r.bool("skiplock") {
		return errInternal("%s is locked (%s)", guestNoun(g), l)
	}
	return nil
}

// guestNoun is how PVE's messages name a guest: "VM" in qemu-server, "CT" in pve-container.
func guestNoun(g *guest) string {
	if g.Kind == KindLXC {
		return "CT"
	}
	return "VM"
}
