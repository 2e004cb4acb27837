package pveconformance

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Compression is judged inside download_url's $worker, before anything is
// downloaded (pve-storage src/PVE/API2/Storage/Status.pm download_url): the
// request returns a UPID and the task fails. Its schema enum is
// $PVE::Storage::Plugin::KNOWN_COMPRESSION_FORMATS, a `use constant` list
// read as a scalar, so undef: no value is refused at once.
// decompressor_info (src/PVE/Storage.pm) knows gz, lzo, zst and bz2 for an
// iso. No file is written, so a real run leaves nothing behind.
func TestDownloadURLCompressionFailsTheTask(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/storage/{storage}/download-url content filename url compression")
	cases := map[string]struct {
		reason, content, name, comp, want string
		simOnly                           bool
	}{
		"TemplateCompressed": {
			reason:  "$worker: die \"decompression not supported for $content\" if $content ne 'iso'.",
			content: "vztmpl", name: Prefix + tg.RunID() + "-alpine.tar.gz", comp: "gz",
			want: "decompression not supported for vztmpl",
		},
		"UnknownMethod": {
			reason:  "$worker: die \"no decompression method found\" when decompressor_info('iso', ...) has none.",
			content: "iso", name: Prefix + tg.RunID() + "-unknown.iso", comp: "xz",
			want: "no decompression method found",
		},
		"KnownMethod": {
			reason:  "An iso with a method decompressor_info knows downloads.",
			content: "iso", name: Prefix + tg.RunID() + "-known.iso", comp: "zst",
			want: "OK", simOnly: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := tg.in(t)
			if tc.simOnly && tg.IsReal() {
				t.Skip("needs a zstd-compressed iso to download; the simulator downloads no bytes")
			}
			res := tg.raw(http.MethodPost, tg.storagePath(tg.ContentStorage(), "/download-url"),
				Params("content", tc.content, "filename", tc.name, "url", "https://cdimage.example/"+tc.name, "compression", tc.comp))
			if res.Status != http.StatusOK {
				t.Fatalf("%s\nanswer %s %s, want a UPID: compression is checked in the task", tc.reason, res.StatusLine, res.Text)
			}
			if exit := tg.task(res.UPID()); exit != tc.want {
				t.Errorf("%s\nexit status %q, want %q", tc.reason, exit, tc.want)
			}
		})
	}
}

// downloadOutcome is how a download-url request ended: the answer, and for a
// started task its exit status and log.
type downloadOutcome struct {
	res        Response
	exitStatus string
	log        []string
}

// postDownload sends download-url to the content storage and waits for the
// task it starts.
func (c *tcase) postDownload(kv ...string) downloadOutcome {
	c.t.Helper()
	res := c.raw(http.MethodPost, c.storagePath(c.ContentStorage(), "/download-url"), Params(kv...))
	out := downloadOutcome{res: res}
	if res.Status != http.StatusOK {
		return out
	}
	out.exitStatus = c.task(res.UPID())
	out.log = c.taskLog(res.UPID())
	return out
}

// checksum and checksum-algorithm each `requires` the other in download_url's
// schema (pve-storage src/PVE/API2/Storage/Status.pm, download_url); pve-common
// src/PVE/JSONSchema.pm check_object reports the absent one: a 400 "Parameter
// verification failed." whose errors map names it with "missing property
// required by '<given>'". No task starts.
func TestDownloadURLChecksumRequiresItsAlgorithm(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/storage/{storage}/download-url content filename url checksum checksum-algorithm")
	cases := map[string]struct {
		reason string
		params []string
		want   map[string]string
	}{
		"ChecksumAlone": {
			reason: "checksum requires checksum-algorithm (JSONSchema.pm check_object).",
			params: []string{"checksum", "0123abcd"},
			want:   map[string]string{"checksum-algorithm": "missing property required by 'checksum'"},
		},
		"AlgorithmAlone": {
			reason: "checksum-algorithm requires checksum (JSONSchema.pm check_object).",
			params: []string{"checksum-algorithm", "sha256"},
			want:   map[string]string{"checksum": "missing property required by 'checksum-algorithm'"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := tg.in(t)
			kv := append([]string{"content", "iso", "filename", Prefix + tg.RunID() + "-a.iso", "url", "https://x.example/a.iso"}, tc.params...)
			out := tg.postDownload(kv...)
			if out.res.Status != http.StatusBadRequest || out.res.Message() != "Parameter verification failed.\n" {
				t.Fatalf("%s\nanswer %s %q, want 400 Parameter verification failed.", tc.reason, out.res.StatusLine, out.res.Message())
			}
			got := out.res.Errors()
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s\nerrors[%q] = %q, want %q (all: %v)", tc.reason, k, got[k], v, got)
				}
			}
		})
	}
}

// pve-common src/PVE/Tools.pm download_file_from_url prints "downloading $url
// to $dest", then, when $dest exists: without a checksum dies "refusing to
// override existing file '$dest'" (download_url sets no allow_overwrite); with
// one it hashes the file there: the same checksum ends the task OK without a
// download, another dies "checksum mismatch: got '...' != expect '...', aborting".
// The file is never replaced. $dest is get_iso_dir's path plus the file name
// (pve-storage src/PVE/API2/Storage/Status.pm, download_url).
func TestDownloadURLOntoAnExistingFile(t *testing.T) {
	const (
		file = Prefix + "debian-12.iso"
		dest = "/var/lib/vz/template/iso/" + file
		src  = "https://cdimage.example/debian-12.iso"
	)
	cases := map[string]struct {
		reason   string
		checksum func(sim *pvesim.Server, volid string) string
		want     string
	}{
		"NoChecksum": {
			reason: "download_file_from_url: die \"refusing to override existing file '$dest'\".",
			want:   "refusing to override existing file '" + dest + "'",
		},
		"SameChecksum": {
			reason: "download_file_from_url: \"OK, got correct file already, no need to download\".",
			checksum: func(sim *pvesim.Server, volid string) string {
				return sim.ExistingFileChecksum(simNode, volid, "sha256")
			},
			want: "OK",
		},
		"OtherChecksum": {
			reason:   "download_file_from_url: die \"checksum mismatch: got '...' != expect '...', aborting\".",
			checksum: func(*pvesim.Server, string) string { return "0123abcd" },
			want:     "checksum mismatch: got '",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := target(t, pvesim.Options{})
			sim := tg.requireSim("needs a file of known size and checksum already on the storage, which a real run does not place")
			covers(tg, "POST /nodes/{node}/storage/{storage}/download-url content filename url")
			volid := tg.ContentStorage() + ":iso/" + file
			if err := sim.AddFile(tg.Node(), volid, 12345); err != nil {
				t.Fatal(err)
			}
			kv := []string{"content", "iso", "filename", file, "url", src}
			if tc.checksum != nil {
				kv = append(kv, "checksum", tc.checksum(sim, volid), "checksum-algorithm", "sha256")
			}
			out := tg.postDownload(kv...)
			if out.res.Status != http.StatusOK {
				t.Fatalf("%s\nanswer %s %q, want a UPID: the file is found by the worker", tc.reason, out.res.StatusLine, out.res.Text)
			}
			if !strings.HasPrefix(out.exitStatus, tc.want) {
				t.Errorf("%s\nexit status %q, want %q...", tc.reason, out.exitStatus, tc.want)
			}
			if tc.checksum != nil && tc.want != "OK" && !strings.HasSuffix(out.exitStatus, "' != expect '0123abcd', aborting") {
				t.Errorf("%s\nexit status %q, want it to end \"!= expect '0123abcd', aborting\"", tc.reason, out.exitStatus)
			}
			if len(out.log) == 0 || out.log[0] != "downloading "+src+" to "+dest {
				t.Errorf("%s\nlog %q, want it to start with \"downloading %s to %s\"", tc.reason, out.log, src, dest)
			}
			var content []map[string]any
			tg.data(tg.storagePath(tg.ContentStorage(), "/content"), Params("content", "iso"), &content)
			if len(content) != 1 || content[0]["size"] != float64(12345) {
				t.Errorf("%s\ncontent %v, want the file there before, untouched", tc.reason, content)
			}
		})
	}
}

// query-url-metadata (pve-manager PVE/API2/Nodes.pm query_url_metadata)
// answers with what a download of the URL gives, from its HEAD request; a
// server error is PVE's 500 carrying the server's status line; its url
// parameter has pattern 'https?://.*', so another scheme is a 400 on url
// (pve-common src/PVE/JSONSchema.pm check_type).
func TestQueryURLMetadataMatchesTheDownload(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "GET /nodes/{node}/query-url-metadata url")
	meta := "/nodes/" + url.PathEscape(tg.Node()) + "/query-url-metadata"
	if r := tg.raw(http.MethodGet, meta, Params("url", "ftp://x.example/a.iso")); r.Status != http.StatusBadRequest || r.Errors()["url"] == "" {
		t.Errorf("an ftp URL: %s %v, want 400 naming url", r.StatusLine, r.Errors())
	}
	tg.requireSim("the rest needs URLs whose answers the simulator fixes (a size, a 404)")
	const isoURL = "https://cdimage.example/debian-12.iso"
	var got struct {
		Filename string `json:"filename"`
		Size     uint64 `json:"size"`
		MimeType string `json:"mimetype"`
	}
	tg.data(meta, Params("url", isoURL), &got)
	if got.Filename != "debian-12.iso" || got.Size != uint64(max(pvesim.DownloadSize(isoURL), 0)) || got.MimeType == "" {
		t.Fatalf("metadata %+v, want debian-12.iso of %d bytes", got, pvesim.DownloadSize(isoURL))
	}
	file := Prefix + "debian-12.iso"
	out := tg.postDownload("content", "iso", "filename", file, "url", isoURL)
	if out.exitStatus != "OK" {
		t.Fatalf("download: %s %s %v", out.res.StatusLine, out.exitStatus, out.log)
	}
	var content []map[string]any
	tg.data(tg.storagePath(tg.ContentStorage(), "/content"), Params("content", "iso"), &content)
	if len(content) != 1 || content[0]["size"] != float64(got.Size) {
		t.Fatalf("downloaded %v, want %d bytes as the metadata said", content, got.Size)
	}
	r := tg.raw(http.MethodGet, meta, Params("url", "https://x.example/fail.iso"))
	if r.Status != http.StatusInternalServerError || !strings.Contains(r.Message(), "404 Not Found") {
		t.Fatalf("a missing file: %s %q, want 500 with the server's 404", r.StatusLine, r.Message())
	}
}
