package pveconformance

import (
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func (c *tcase) storagePath(storage, rest string) string {
	return "/nodes/" + url.PathEscape(c.Node()) + "/storage/" + url.PathEscape(storage) + rest
}

// download-url fetches a file onto a storage in a task; the volume appears
// when the task ends, is listed with content=iso and read by volid, and is
// removed with DELETE content/{volume} (pve-manager PVE/API2/Storage/... is
// pve-storage src/PVE/API2/Storage/Status.pm download_url, Content.pm index,
// info and delete). query-url-metadata answers the size the server reports
// (pve-manager PVE/API2/Nodes.pm query_url_metadata). A file name of the
// wrong extension is refused before any task: 400 on filename
// ("wrong file extension", download_url's check).
func TestDownloadURLContentAndDelete(t *testing.T) {
	tg := target(t, pvesim.Options{})
	cfg := tg.Config()
	if cfg.DownloadURL == "" {
		t.Skipf("needs a URL the node can download a small .iso from: set %s", EnvDownloadURL)
	}
	covers(tg, "POST /nodes/{node}/storage/{storage}/download-url content filename url verify-certificates",
		"GET /nodes/{node}/storage/{storage}/content content", "GET /nodes/{node}/storage/{storage}/content/{volume}",
		"DELETE /nodes/{node}/storage/{storage}/content/{volume}", "GET /nodes/{node}/query-url-metadata url verify-certificates")
	var meta map[string]any
	tg.data("/nodes/"+url.PathEscape(tg.Node())+"/query-url-metadata", Params("url", cfg.DownloadURL, "verify-certificates", "1"), &meta)
	if meta["filename"] == nil {
		t.Errorf("query-url-metadata: %v", meta)
	}
	file := Prefix + tg.RunID() + "-" + path.Base(strings.TrimSuffix(cfg.DownloadURL, ".iso")) + ".iso"
	volid := tg.ContentStorage() + ":iso/" + file
	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if tg.HasFile(ctx, volid) {
			_ = tg.deleteVolume(ctx, tg.Node(), tg.ContentStorage(), volid)
		}
	})
	tg.mustTask(http.MethodPost, tg.storagePath(tg.ContentStorage(), "/download-url"),
		Params("content", "iso", "filename", file, "url", cfg.DownloadURL, "verify-certificates", "1"))
	var list []map[string]any
	tg.data(tg.storagePath(tg.ContentStorage(), "/content"), Params("content", "iso"), &list)
	found := false
	for _, v := range list {
		found = found || v["volid"] == volid
	}
	if !found {
		t.Fatalf("%s not listed: %v", volid, list)
	}
	var info map[string]any
	tg.data(tg.storagePath(tg.ContentStorage(), "/content/"+url.PathEscape(volid)), nil, &info)
	if info["format"] != "iso" || info["size"] == nil {
		t.Errorf("volume info: %v", info)
	}
	bad := tg.raw(http.MethodPost, tg.storagePath(tg.ContentStorage(), "/download-url"), Params("content", "iso", "filename", Prefix+"x.qcow2", "url", cfg.DownloadURL))
	if bad.Status != http.StatusBadRequest || !strings.Contains(bad.Errors()["filename"], "wrong file extension") {
		t.Errorf("wrong extension: %s %s", bad.StatusLine, bad.Text)
	}
	tg.mustTask(http.MethodDelete, tg.storagePath(tg.ContentStorage(), "/content/"+url.PathEscape(volid)), nil)
	res := tg.raw(http.MethodGet, tg.storagePath(tg.ContentStorage(), "/content/"+url.PathEscape(volid)), nil)
	if res.Status == http.StatusOK {
		t.Errorf("volume still there after delete: %s", res.Text)
	}
}

// download-url with a checksum verifies it inside the task: a wrong one
// fails the task (pve-storage src/PVE/API2/Storage/Status.pm download_url →
// PVE::Tools::download_file_from_url: "checksum mismatch").
func TestDownloadURLChecksumMismatchFailsTheTask(t *testing.T) {
	tg := target(t, pvesim.Options{})
	cfg := tg.Config()
	if cfg.DownloadURL == "" {
		t.Skipf("needs a URL the node can download a small .iso from: set %s", EnvDownloadURL)
	}
	if !tg.IsReal() {
		t.Skip("not modelled: the simulator downloads no bytes, so it has no checksum to compare")
	}
	covers(tg, "POST /nodes/{node}/storage/{storage}/download-url content filename url checksum checksum-algorithm")
	file := Prefix + tg.RunID() + "-checksum.iso"
	res := tg.raw(http.MethodPost, tg.storagePath(tg.ContentStorage(), "/download-url"), Params("content", "iso", "filename", file,
		"url", cfg.DownloadURL, "checksum", strings.Repeat("0", 64), "checksum-algorithm", "sha256"))
	if res.Status != http.StatusOK {
		t.Fatalf("download-url: %s %s", res.StatusLine, res.Text)
	}
	if exit := tg.task(res.UPID()); exit == "OK" {
		t.Errorf("a wrong checksum must fail the task, ended %q", exit)
	}
}

// oci-registry-pull stores an image as a vztmpl volume in a task
// (pve-storage src/PVE/API2/Storage/Status.pm oci_registry_pull, PVE 9).
func TestOCIRegistryPull(t *testing.T) {
	tg := target(t, pvesim.Options{})
	ref := tg.Config().OCIReference
	if ref == "" {
		t.Skipf("needs an image the node can pull: set %s", EnvOCIReference)
	}
	if tg.IsReal() {
		t.Skip("the pulled file is named from the reference, not with the suite's prefix, so a real run could not tell it from the tester's own")
	}
	covers(tg, "POST /nodes/{node}/storage/{storage}/oci-registry-pull reference")
	upid := tg.mustTask(http.MethodPost, tg.storagePath(tg.ContentStorage(), "/oci-registry-pull"), Params("reference", ref))
	if !strings.Contains(upid, ":ocipull:") && !strings.Contains(upid, ":download:") {
		t.Logf("task type in %s", upid)
	}
	var list []map[string]any
	tg.data(tg.storagePath(tg.ContentStorage(), "/content"), Params("content", "vztmpl"), &list)
	for _, v := range list {
		if strings.Contains(v["volid"].(string), "busybox") {
			return
		}
	}
	t.Fatalf("pulled image not listed: %v", list)
}
