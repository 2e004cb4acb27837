package pveconformance

import (
	"net/http"
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
