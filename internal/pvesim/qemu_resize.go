package pvesim

import (
	"strconv"
	"strings"
)

// PUT /nodes/{node}/qemu/{vmid}/resize: growing a VM disk
// (qemu-server src/PVE/API2/Qemu.pm, resize_vm).

// handleQemuResize grows a disk in a resize task; every check, the shrink refusal
// included, is a task failure as in PVE.
func handleQemuResize(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	return s.startTask(r, taskDef{Type: "resize", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Finish: func(t *task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			if d := r.str("digest"); d != "" && d != g.digest() {
				return errInternal("detected modified configuration - file changed by other user? Try again.")
			}
			if err := checkLock(g, r); err != nil {
				return err
			}
			return s.resizeDisk(g, r.str("disk"), r.str("size"), t)
		}}), nil
}

func (s *Server) resizeDisk(g *guest, disk, size string, t *task) error {
	value, ok := g.Config[disk]
	if !ok {
		return errInternal("disk '%s' does not exist", disk)
	}
	if isCDROM(value) {
		return errInternal("you can't resize a cdrom")
	}
	vol, opts := driveVolume(value)
	_, v, found := s.findVolume(g.Node, vol)
	if !found {
		return errInternal("volume '%s' does not exist", vol)
	}
	grow := strings.HasPrefix(size, "+")
	n, okSize := parseSize(strings.TrimPrefix(size, "+"))
	if !okSize {
		return errInternal("invalid size '%s'", size)
	}
	newSize := n
	if grow {
		newSize = v.Size + n
	}
	if newSize < v.Size {
		return errInternal("shrinking disks is not supported")
	}
	if newSize == v.Size {
		t.logf("no change")
		return nil
	}
	v.Size = newSize
	opts["size"] = formatSize(newSize)
	g.Config[disk] = driveValue(vol, opts)
	t.logf("  Size of logical volume changed to %s.", formatSize(newSize))
	s.touch(g)
	return nil
}
