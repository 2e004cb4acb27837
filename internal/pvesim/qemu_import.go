package pvesim

import (
	"fmt"
	"strings"
)

// import-from as qemu-server's create and config API check it, before any
// worker runs: a volume must be a disk image (content images) or an import
// file (content import, PVE 8.2+); an iso or vztmpl volume is refused as a
// parameter error naming the drive. An absolute path is allowed for
// root@pam itself only (check_volume_access), never for an API token, even
// one of root@pam.

// importableContent are the content types import-from reads.
var importableContent = map[string]bool{"images": true, "import": true}

// errOnlyRootPaths is PVE's refusal of a filesystem path for anyone but
// root@pam.
const errOnlyRootPaths = "Only root can pass arbitrary filesystem paths."

// checkImportSources checks the import-from of every drive in set.
func (s *Server) checkImportSources(r *request, set map[string]string) error {
	for _, k := range sortedKeys(set) {
		if !isQemuDiskKey(k) {
			continue
		}
		_, opts := driveVolume(set[k])
		src := opts["import-from"]
		if src == "" {
			continue
		}
		if err := checkImportSource(r, k, src); err != nil {
			return err
		}
	}
	return nil
}

// checkImportSource is qemu-server's check of one drive's import-from; that
// the volume exists is found by the worker, when it reads it.
func checkImportSource(r *request, key, src string) error {
	if strings.HasPrefix(src, "/") {
		if r.cred.TokenID != "" || r.cred.User != "root@pam" {
			return errInternal("%s", errOnlyRootPaths)
		}
		return nil
	}
	if _, _, ok := splitVolID(src); !ok {
		return errParam(key, fmt.Sprintf("unable to parse volume ID '%s'", src))
	}
	if content := contentOf(src); !importableContent[content] {
		return errParam(key, fmt.Sprintf("%s has wrong type '%s' - needs to be 'images' or 'import'", src, content))
	}
	return nil
}

// importSource finds what import-from names on node: a volume id, or (for
// root@pam) the path of a file volume.
func (s *Server) importSource(node, src string) (*volume, bool) {
	if !strings.HasPrefix(src, "/") {
		_, v, ok := s.findVolume(node, src)
		return v, ok
	}
	for _, id := range s.st.storageIDs(node) {
		st := s.st.storages[node][id]
		for volid, v := range st.Volumes {
			if volumePath(st, volid) == src {
				return v, true
			}
		}
	}
	return nil, false
}
