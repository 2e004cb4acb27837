package pvesim

import (
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// What a node learns about a URL before downloading it, and files seeded
// with a given size (a file someone downloaded outside the provider).

func registerDownloadMetadataRoutes(r *router) {
	r.handle(RouteSpec{Method: http.MethodGet, Path: "/nodes/{node}/query-url-metadata", Params: []ParamSpec{
		pNode(), pString("url").req().pattern(`https?://.*`), pBool("verify-certificates"),
	}}, handleQueryURLMetadata)
}

// handleQueryURLMetadata answers as pve-manager does from a HEAD request:
// the file name (from the URL's path here), its size and MIME type. The size
// is the one a download of the URL gives; a URL whose path asks for a
// failure answers like a server saying 404.
func handleQueryURLMetadata(s *Server, r *request) (any, error) {
	if err := s.checkNode(r.node()); err != nil {
		return nil, err
	}
	rawURL := r.str("url")
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errInternal("invalid URL '%s'", rawURL)
	}
	if strings.Contains(u.Path, "fail") {
		return nil, errInternal("invalid server response: '404 Not Found'")
	}
	return map[string]any{
		"filename": path.Base(u.Path), "size": downloadSize(rawURL), "mimetype": "application/octet-stream",
	}, nil
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
