package pvesim

import (
	"fmt"
	"strings"
)

// Storages as pve-storage serves them under /nodes/{node}/storage and /storage: listing,
// status, content and volumes, and the storage configuration. download-url is in
// storage_download.go, oci-registry-pull in oci.go.

var storageContentEnum = []string{"iso", "vztmpl", "import"}

const reStorageID = `[a-zA-Z][a-zA-Z0-9\-_.]*[a-zA-Z0-9]`

func pStorageID() ParamSpec { return pString("storage").req().pattern(reStorageID) }

// pOptionalStorageID is a storage filter, or the storage of a volume whose ID also names it.
func pOptionalStorageID() ParamSpec { return pString("storage").pattern(reStorageID) }

func (s *Server) nodeStorage(node, id string) (*storage, error) {
	if err := s.checkNode(node); err != nil {
		return nil, err
	}
	st, ok := s.st.storage(node, id)
	if !ok {
		return nil, errInternal("storage '%s' does not exist", id)
	}
	return st, nil
}

// storageStatus is one entry of GET /nodes/{node}/storage: numbers and 0/1 booleans.
func storageStatus(st *storage) map[string]any {
	used := st.used()
	m := map[string]any{
		"storage": st.ID, "type": st.Type, "content": strings.Join(st.Content, ","), "active": 1, "enabled": 1,
		"shared": boolNum(st.Shared), "total": st.Total, "used": used, "avail": st.Total - used,
	}
	if st.Total > 0 {
		m["used_fraction"] = float64(used) / float64(st.Total)
	}
	return m
}

func handleStorageIndex(s *Server, r *request) (any, error) {
	node := r.node()
	if err := s.checkNode(node); err != nil {
		return nil, err
	}
	if r.has("storage") {
		if _, ok := s.st.storage(node, r.str("storage")); !ok {
			return nil, errParam("storage", "No such storage.")
		}
	}
	target := r.str("target")
	if target != "" {
		if err := s.checkNode(target); err != nil {
			return nil, err
		}
	}
	wanted := splitPVEList(r.str("content"))
	out := []map[string]any{}
	for _, id := range s.st.storageIDs(node) {
		st := s.st.storages[node][id]
		if !storageListed(st, r.str("storage"), wanted) || (target != "" && target != node && !st.Shared) {
			continue
		}
		out = append(out, storageStatus(st))
	}
	return out, nil
}

func storageListed(st *storage, only string, content []string) bool {
	if only != "" && only != st.ID {
		return false
	}
	if len(content) == 0 {
		return true
	}
	for _, c := range content {
		if st.supports(c) {
			return true
		}
	}
	return false
}

func handleStorageStatus(s *Server, r *request) (any, error) {
	st, err := s.nodeStorage(r.node(), r.str("storage"))
	if err != nil {
		return nil, err
	}
	m := storageStatus(st)
	delete(m, "storage")
	delete(m, "used_fraction")
	return m, nil
}

func handleStorageContent(s *Server, r *request) (any, error) {
	st, err := s.nodeStorage(r.node(), r.str("storage"))
	if err != nil {
		return nil, err
	}
	content, vmid := r.str("content"), r.int("vmid")
	out := []map[string]any{}
	for _, id := range sortedKeys(st.Volumes) {
		v := st.Volumes[id]
		if (content != "" && v.Content != content) || (vmid != 0 && v.VMID != vmid) {
			continue
		}
		out = append(out, volumeEntry(v))
	}
	return out, nil
}

func volumeEntry(v *volume) map[string]any {
	m := map[string]any{"volid": v.VolID, "format": v.Format, "size": v.Size, "ctime": v.CTime, "content": v.Content}
	if v.VMID != 0 {
		m["vmid"] = v.VMID
	}
	if v.Parent != "" {
		m["parent"] = v.Parent
	}
	if v.Notes != "" {
		m["notes"] = v.Notes
	}
	if v.Protected {
		m["protected"] = 1
	}
	if v.Content == "images" || v.Content == "rootdir" {
		m["used"] = v.Size / 4
	}
	return m
}

// realVolumeID joins a storage and a volume name the way pve-storage's API does: a
// volume given with "storage:" must match the path's storage.
func realVolumeID(stID, volume string) (string, string, error) {
	if sid, _, ok := strings.Cut(volume, ":"); ok {
		if stID != "" && sid != stID {
			return "", "", errParam("volume", fmt.Sprintf("storage ID mismatch (%s != %s)", sid, stID))
		}
		return volume, sid, nil
	}
	if stID == "" {
		return "", "", errParam("volume", "no storage specified - incomplete volume ID")
	}
	return stID + ":" + volume, stID, nil
}

// volumeRequest resolves the {storage}/{volume} of a request to a full volume id and the
// node's storage it names.
func (s *Server) volumeRequest(r *request) (string, *storage, error) {
	volid, stID, err := realVolumeID(r.str("storage"), r.str("volume"))
	if err != nil {
		return "", nil, err
	}
	st, err := s.nodeStorage(r.node(), stID)
	if err != nil {
		return "", nil, err
	}
	return volid, st, nil
}

func handleVolumeInfo(s *Server, r *request) (any, error) {
	volid, st, err := s.volumeRequest(r)
	if err != nil {
		return nil, err
	}
	v, ok := st.Volumes[volid]
	if !ok {
		return nil, errInternal("volume_size_info on '%s' failed - no format", volid)
	}
	m := map[string]any{"path": volumePath(st, volid), "size": v.Size, "used": v.Size, "format": v.Format}
	if v.Notes != "" {
		m["notes"] = v.Notes
	}
	if v.Protected {
		m["protected"] = 1
	}
	return m, nil
}

func volumePath(st *storage, volid string) string {
	_, name, _ := splitVolID(volid)
	switch {
	case st.Path == "":
		return "/dev/pve/" + name
	case strings.HasPrefix(name, "iso/"):
		return st.Path + "/template/iso/" + strings.TrimPrefix(name, "iso/")
	case strings.HasPrefix(name, "vztmpl/"):
		return st.Path + "/template/cache/" + strings.TrimPrefix(name, "vztmpl/")
	case strings.HasPrefix(name, "import/"):
		return st.Path + "/import/" + strings.TrimPrefix(name, "import/")
	case strings.HasPrefix(name, "backup/"):
		return st.Path + "/dump/" + strings.TrimPrefix(name, "backup/")
	}
	return st.Path + "/images/" + name
}

// handleVolumeDelete runs an imgdel task; with delay it answers null when the task is
// already done and OK, the task's error when it failed, else the UPID.
func handleVolumeDelete(s *Server, r *request) (any, error) {
	volid, st, err := s.volumeRequest(r)
	if err != nil {
		return nil, err
	}
	id := st.ID
	if owner := vmidOfVolume(volid); owner != 0 {
		id = fmt.Sprintf("%d@%s", owner, st.ID)
	}
	upid := s.startTask(r, taskDef{Type: "imgdel", ID: id, Node: r.node(),
		Finish: func(t *task) error { return deleteVolume(st, volid, t) }})
	if !r.has("delay") {
		return upid, nil
	}
	t := s.st.tasks[upid]
	if t == nil || t.Status != "stopped" {
		return upid, nil
	}
	if t.ExitStatus == "OK" || strings.HasPrefix(t.ExitStatus, "WARNINGS") {
		return nil, nil
	}
	return nil, errInternal("%s", t.ExitStatus)
}

func deleteVolume(st *storage, volid string, t *task) error {
	v, ok := st.Volumes[volid]
	if !ok {
		// pve-storage's free_image only warns (a plain Perl warn, not $rpcenv->warn) about a
		// missing file and returns: the worker goes on to say it removed the volume and the
		// task ends OK.
		t.logf("disk image '%s' does not exist", volumePath(st, volid))
		t.logf("Removed volume '%s'", volid)
		return nil
	}
	if v.Protected {
		// pve-storage src/PVE/Storage/Plugin.pm, free_image.
		_, name, _ := splitVolID(volid)
		return fmt.Errorf("cannot remove protected volume '%s' on '%s'", name, st.ID)
	}
	st.removeVolume(volid)
	t.logf("Removed volume '%s'", volid)
	return nil
}

func handleStorageConfigIndex(s *Server, r *request) (any, error) {
	seen := map[string]bool{}
	out := []map[string]any{}
	for _, n := range s.st.nodes {
		for _, id := range s.st.storageIDs(n) {
			st := s.st.storages[n][id]
			if seen[id] || (r.has("type") && st.Type != r.str("type")) {
				continue
			}
			seen[id] = true
			out = append(out, storageConfig(st))
		}
	}
	return out, nil
}

func handleStorageConfigRead(s *Server, r *request) (any, error) {
	for _, n := range s.st.nodes {
		if st, ok := s.st.storage(n, r.str("storage")); ok {
			return storageConfig(st), nil
		}
	}
	return nil, errInternal("storage '%s' does not exist", r.str("storage"))
}

func storageConfig(st *storage) map[string]any {
	m := map[string]any{"storage": st.ID, "type": st.Type, "content": strings.Join(st.Content, ","), "digest": "0000000000000000000000000000000000000000"}
	if st.Path != "" {
		m["path"] = st.Path
	}
	if st.Shared {
		m["shared"] = 1
	}
	if st.Type == "lvmthin" {
		m["thinpool"], m["vgname"] = "data", "pve"
	}
	return m
}
