package pvesim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// splitVolID splits "local-lvm:vm-100-disk-0" into storage and volume name.
func splitVolID(volid string) (string, string, bool) {
	st, name, ok := strings.Cut(volid, ":")
	if !ok || st == "" || name == "" {
		return "", "", false
	}
	return st, name, true
}

// findVolume looks a volume up on a node's storages.
func (s *Server) findVolume(node, volid string) (*storage, *volume, bool) {
	stID, _, ok := splitVolID(volid)
	if !ok {
		return nil, nil, false
	}
	st, ok := s.st.storage(node, stID)
	if !ok {
		return nil, nil, false
	}
	v, ok := st.Volumes[volid]
	return st, v, ok
}

// checkStorage verifies a storage exists on the node and holds content of the given type.
func (s *Server) checkStorage(node, stID, content string) (*storage, error) {
	st, ok := s.st.storage(node, stID)
	if !ok {
		return nil, errInternal("storage '%s' does not exist", stID)
	}
	if content != "" && !st.supports(content) {
		return nil, errInternal("storage '%s' does not support content-type '%s'", stID, content)
	}
	return st, nil
}

// volumeName builds a new volume id for name on st, in the storage type's layout.
func (st *storage) volumeName(vmid int, name string) (string, string) {
	if st.Type == "lvmthin" || st.Type == "lvm" || st.Type == "zfspool" || st.Type == "rbd" {
		return st.ID + ":" + name, "raw"
	}
	return fmt.Sprintf("%s:%d/%s.qcow2", st.ID, vmid, name), "qcow2"
}

// freeDiskName finds the first unused "<prefix>-<vmid>-disk-N" on the storage.
func (st *storage) freeDiskName(prefix string, vmid int) string {
	for n := 0; ; n++ {
		name := fmt.Sprintf("%s-%d-disk-%d", prefix, vmid, n)
		if !st.hasVolumeNamed(name) {
			return name
		}
	}
}

func (st *storage) hasVolumeNamed(name string) bool {
	other := strings.Replace(name, "vm-", "base-", 1)
	if strings.HasPrefix(name, "base-") {
		other = strings.Replace(name, "base-", "vm-", 1)
	}
	// Base images keep their number, so "vm-100-disk-0" and "base-100-disk-0" never coexist.
	return st.names[name] > 0 || st.names[other] > 0
}

// diskBaseName is the last path element of a volume name without extension
// ("local-lvm:base-9000-disk-0/vm-101-disk-0" gives "vm-101-disk-0").
func diskBaseName(volid string) string {
	_, name, _ := splitVolID(volid)
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[:i]
	}
	return name
}

// addVolume registers a volume; every change of Volumes goes through addVolume and
// removeVolume so the name index stays right.
func (st *storage) addVolume(v *volume) {
	if st.Volumes == nil {
		st.Volumes = map[string]*volume{}
	}
	if st.names == nil {
		st.names = map[string]int{}
	}
	if _, exists := st.Volumes[v.VolID]; !exists {
		st.names[diskBaseName(v.VolID)]++
	}
	st.Volumes[v.VolID] = v
}

func (st *storage) removeVolume(volid string) {
	if _, ok := st.Volumes[volid]; !ok {
		return
	}
	delete(st.Volumes, volid)
	name := diskBaseName(volid)
	st.names[name]--
	if st.names[name] <= 0 {
		delete(st.names, name)
	}
}

// allocDisk creates a new disk volume for a guest.
func (s *Server) allocDisk(node, stID string, vmid int, size int64, content string) (*volume, error) {
	st, err := s.checkStorage(node, stID, content)
	if err != nil {
		return nil, err
	}
	if st.used()+size > st.Total {
		return nil, errInternal("not enough free space on storage '%s'", stID)
	}
	volid, format := st.volumeName(vmid, st.freeDiskName("vm", vmid))
	if content == "rootdir" && format == "qcow2" {
		volid, format = fmt.Sprintf("%s:%d/%s.raw", st.ID, vmid, st.freeDiskName("vm", vmid)), "raw"
	}
	v := &volume{VolID: volid, Format: format, Size: size, VMID: vmid, CTime: time.Now().Unix(), Content: content}
	st.addVolume(v)
	return v, nil
}

// allocNamed creates a volume with a fixed name (cloud-init drives).
func (s *Server) allocNamed(node, stID string, vmid int, name string, size int64, content string) (*volume, error) {
	st, err := s.checkStorage(node, stID, content)
	if err != nil {
		return nil, err
	}
	volid, format := st.volumeName(vmid, name)
	if v, ok := st.Volumes[volid]; ok {
		return v, nil
	}
	v := &volume{VolID: volid, Format: format, Size: size, VMID: vmid, CTime: time.Now().Unix(), Content: content}
	st.addVolume(v)
	return v, nil
}

// ensureVolume registers a volume referenced by a seeded config if it is missing.
func (s *Server) ensureVolume(node, volid string, size int64, vmid int, content string) {
	stID, _, ok := splitVolID(volid)
	if !ok {
		return
	}
	st, ok := s.st.storage(node, stID)
	if !ok {
		return
	}
	if _, ok := st.Volumes[volid]; ok {
		return
	}
	format := "raw"
	if strings.HasSuffix(volid, ".qcow2") {
		format = "qcow2"
	}
	st.addVolume(&volume{VolID: volid, Format: format, Size: size, VMID: vmid, CTime: time.Now().Unix(), Content: content})
}

// freeVolume deletes a volume if it exists.
func (s *Server) freeVolume(node, volid string) {
	if st, _, ok := s.findVolume(node, volid); ok {
		st.removeVolume(volid)
	}
}

// contentOf guesses a volume's content type from its id, as PVE's parse_volname does.
func contentOf(volid string) string {
	_, name, _ := splitVolID(volid)
	switch {
	case strings.HasPrefix(name, "iso/"):
		return "iso"
	case strings.HasPrefix(name, "vztmpl/"):
		return "vztmpl"
	case strings.HasPrefix(name, "snippets/"):
		return "snippets"
	case strings.HasPrefix(name, "import/"):
		return "import"
	case strings.HasPrefix(name, "backup/"):
		return "backup"
	case strings.Contains(name, "subvol-"):
		return "rootdir"
	}
	return "images"
}

// vmidOfVolume extracts the owner from "vm-100-disk-0" style names.
func vmidOfVolume(volid string) int {
	_, name, _ := splitVolID(volid)
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	for _, prefix := range []string{"vm-", "base-", "subvol-"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			id, _, _ := strings.Cut(rest, "-")
			n, _ := strconv.Atoi(id)
			return n
		}
	}
	return 0
}

// AddVolume adds a file volume such as "local:iso/debian.iso" or "local:vztmpl/debian-12.tar.zst".
func (s *Server) AddVolume(node, volid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkNode(node); err != nil {
		return err
	}
	stID, _, ok := splitVolID(volid)
	if !ok {
		return errf(400, "invalid volume id '%s'", volid)
	}
	content := contentOf(volid)
	st, err := s.checkStorage(node, stID, content)
	if err != nil {
		return err
	}
	format := "raw"
	switch content {
	case "iso":
		format = "iso"
	case "vztmpl":
		format = "tzst"
		if strings.HasSuffix(volid, ".gz") {
			format = "tgz"
		}
	}
	st.addVolume(&volume{VolID: volid, Format: format, Size: 512 * mib, VMID: vmidOfVolume(volid), CTime: time.Now().Unix(), Content: content})
	s.markDirty()
	return nil
}
