package pvesim

import (
	"net/http"
	"strings"
	"testing"
)

// A file storage without iso content answers download-url with pve-storage's content-type
// error; the default storages cannot show it because local holds iso and local-lvm is
// refused earlier as "not a file based storage".
func TestDownloadURLWrongContentType(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.mu.Lock()
	s.st.storages["pve"]["backup"] = &storage{ID: "backup", Type: "dir", Path: "/mnt/backup", Total: 10 * gib,
		Content: []string{"backup"}, Volumes: map[string]*volume{}}
	s.mu.Unlock()
	r := &request{method: http.MethodPost, params: map[string]string{"node": "pve", "storage": "backup", "content": "iso",
		"filename": "a.iso", "url": "https://x.example/a.iso"}}
	s.mu.Lock()
	_, err = handleDownloadURL(s, r)
	s.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "storage 'backup' is not configured for content-type 'iso'") {
		t.Fatalf("got %v", err)
	}
}
