package pvesim_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// query-url-metadata answers with what a download of the URL gives, as
// pve-manager's HEAD request does; a server error is PVE's 500.
func TestQueryURLMetadataMatchesTheDownload(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	const isoURL = "https://cdimage.example/debian-12.iso"

	var meta struct {
		Filename string `json:"filename"`
		Size     uint64 `json:"size"`
		MimeType string `json:"mimetype"`
	}
	if err := c.Get(ctx, "/nodes/pve/query-url-metadata?url="+url.QueryEscape(isoURL), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Filename != "debian-12.iso" || meta.Size != uint64(max(pvesim.DownloadSize(isoURL), 0)) || meta.MimeType == "" {
		t.Fatalf("metadata %+v, want debian-12.iso of %d bytes", meta, pvesim.DownloadSize(isoURL))
	}
	task, err := c.NodeRef("pve").StorageRef("local").DownloadURL(ctx, "iso", "debian-12.iso", isoURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitTask(t, c, task); err != nil {
		t.Fatal(err)
	}
	content, err := c.NodeRef("pve").StorageRef("local").GetContent(ctx)
	if err != nil || len(content) != 1 || content[0].Size != meta.Size {
		t.Fatalf("downloaded %v %+v, want %d bytes as the metadata said", err, content, meta.Size)
	}

	r := rawCall(t, sim, "GET", "/nodes/pve/query-url-metadata?url="+url.QueryEscape("https://x.example/fail.iso"), "", "", tokenHeader())
	if r.Status != 500 || !strings.Contains(r.message(), "404 Not Found") {
		t.Fatalf("a missing file: %d %q, want 500 with the server's 404", r.Status, r.message())
	}
	r = rawCall(t, sim, "GET", "/nodes/pve/query-url-metadata?url=ftp://x.example/a.iso", "", "", tokenHeader())
	if r.Status != 400 || r.errors()["url"] == "" {
		t.Fatalf("an ftp URL: %d %v, want 400 naming url", r.Status, r.errors())
	}
}
