package pvesim

import (
	"strconv"
	"strings"
)

// Mount point resize: pve-container's resize_vm (src/PVE/API2/LXC.pm).

// handleLXCResize checks everything before it forks, as pve-container's resize_vm does
// (load_and_check runs once synchronously and again in the worker): shrinking and a
// no-op size are synchronous 500s for containers, unlike QEMU where they fail the task.
func handleLXCResize(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	disk, sizeArg := r.str("disk"), r.str("size")
	if _, err := s.lxcResizeCheck(g, r, disk, sizeArg); err != nil {
		return nil, err
	}
	return s.startTask(r, taskDef{Type: "resize", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Finish: func(t *task) error {
			newSize, err := s.lxcResizeCheck(g, r, disk, sizeArg)
			if err != nil {
				return err
			}
			s.lxcApplySize(g, disk, newSize, t)
			return nil
		}}), nil
}

// lxcResizeCheck is load_and_check: lock, digest, ownership and the new size.
func (s *Server) lxcResizeCheck(g *guest, r *request, disk, sizeArg string) (int64, error) {
	if err := checkLock(g, r); err != nil {
		return 0, err
	}
	if err := lxcCheckDigest(g, r); err != nil {
		return 0, err
	}
	vol, opts := driveVolume(g.Config[disk])
	if vol == "" {
		return 0, errInternal("unable to parse volume ID '%s'", vol)
	}
	if owner := vmidOfVolume(vol); owner != g.VMID {
		return 0, errInternal("can't resize mount point owned by another container (%d)", owner)
	}
	cur, _ := parseSize(opts["size"])
	if _, v, ok := s.findVolume(g.Node, vol); ok {
		cur = v.Size
	}
	req, ok := parseSize(strings.TrimPrefix(sizeArg, "+"))
	if !ok {
		return 0, errInternal("invalid size string")
	}
	newSize := req
	if strings.HasPrefix(sizeArg, "+") {
		newSize = cur + req
	}
	if newSize < cur {
		return 0, errInternal("unable to shrink disk size")
	}
	if newSize == cur {
		return 0, errInternal("disk is already at specified size")
	}
	return newSize, nil
}

func (s *Server) lxcApplySize(g *guest, disk string, newSize int64, t *task) {
	vol, opts := driveVolume(g.Config[disk])
	if _, v, ok := s.findVolume(g.Node, vol); ok {
		v.Size = newSize
	}
	t.logf("Size of logical volume %s changed to %s.", vol, formatSize(newSize))
	opts["size"] = formatSize(newSize)
	g.Config[disk] = driveValue(vol, opts)
	s.touch(g)
}
