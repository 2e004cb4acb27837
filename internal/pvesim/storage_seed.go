package pvesim

import (
	"net/http"
	"time"
)

// Exported calls that seed and inspect storage content for tests, beside what the API serves.

// ExistingFileChecksum is the checksum the simulator gives the stored file
// volid on node ("" when there is none), for tests of a download onto it.
func (s *Server) ExistingFileChecksum(node, volid, algorithm string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, v, ok := s.findVolume(node, volid)
	if !ok {
		return ""
	}
	return existingFileChecksum(algorithm, v)
}

// AddFile stores a file volume such as "local:iso/debian.iso" with the given
// size, as if downloaded or uploaded outside the provider; its format is
// what pve-storage reports for the name.
func (s *Server) AddFile(node, volid string, size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkNode(node); err != nil {
		return err
	}
	stID, _, ok := splitVolID(volid)
	if !ok {
		return errf(http.StatusBadRequest, "invalid volume id '%s'", volid)
	}
	content := contentOf(volid)
	st, err := s.checkStorage(node, stID, content)
	if err != nil {
		return err
	}
	st.addVolume(&volume{VolID: volid, Format: fileFormat(volid, content), Size: size, CTime: time.Now().Unix(), Content: content})
	s.markDirty()
	return nil
}

// DownloadSize is the size a download of rawURL gives in the simulator.
func DownloadSize(rawURL string) int64 { return downloadSize(rawURL) }

// HasVolume reports whether node's storages hold volid.
func (s *Server) HasVolume(node, volid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, ok := s.findVolume(node, volid)
	return ok
}

// ProtectVolume sets or clears a volume's protected flag (PVE's PUT
// .../content/{volume} protected=1): pve-storage then refuses to remove it.
func (s *Server) ProtectVolume(node, volid string, protected bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, v, ok := s.findVolume(node, volid)
	if !ok {
		return errf(http.StatusBadRequest, "no volume '%s' on node '%s'", volid, node)
	}
	v.Protected = protected
	s.markDirty()
	return nil
}

// SetStorageContent sets the content types storage id is configured for, as
// an administrator's `pvesm set <id> --content ...` does: storage.cfg is
// cluster-wide, so on every node that has the storage. PVE before 8.2, or a
// storage never given import content, lacks "import".
func (s *Server) SetStorageContent(id string, content ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	for _, n := range s.st.nodes {
		if st, ok := s.st.storage(n, id); ok {
			st.Content = append([]string(nil), content...)
			found = true
		}
	}
	if !found {
		return errf(http.StatusBadRequest, "storage '%s' does not exist", id)
	}
	s.markDirty()
	return nil
}
