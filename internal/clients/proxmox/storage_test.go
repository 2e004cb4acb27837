package proxmox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDownloadRequestParams(t *testing.T) {
	no, yes := false, true
	base := DownloadRequest{Node: "pve", Storage: "local", Content: "iso", Filename: "a.iso", URL: "https://x/a.iso"}
	cases := map[string]struct {
		reason string
		mod    func(*DownloadRequest)
		want   map[string]string
	}{
		"Minimal": {
			reason: "Only the required parameters: PVE's own defaults apply (it verifies certificates).",
			want:   map[string]string{"content": "iso", "filename": "a.iso", "url": "https://x/a.iso"},
		},
		"ExplicitFalseVerify": {
			reason: "An explicit verifyCertificate: false must reach PVE, whose default is true.",
			mod:    func(d *DownloadRequest) { d.VerifyCertificate = &no },
			want:   map[string]string{"content": "iso", "filename": "a.iso", "url": "https://x/a.iso", "verify-certificates": "0"},
		},
		"ExplicitTrueVerify": {
			reason: "An explicit true is sent as 1.",
			mod:    func(d *DownloadRequest) { d.VerifyCertificate = &yes },
			want:   map[string]string{"content": "iso", "filename": "a.iso", "url": "https://x/a.iso", "verify-certificates": "1"},
		},
		"ChecksumAndCompression": {
			reason: "Checksum, its algorithm and compression use PVE's parameter names.",
			mod: func(d *DownloadRequest) {
				d.Checksum, d.ChecksumAlgorithm, d.Compression = "abc", "sha256", "zst"
			},
			want: map[string]string{
				"content": "iso", "filename": "a.iso", "url": "https://x/a.iso",
				"checksum": "abc", "checksum-algorithm": "sha256", "compression": "zst",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := base
			if tc.mod != nil {
				tc.mod(&d)
			}
			if diff := cmp.Diff(tc.want, d.params()); diff != "" {
				t.Errorf("%s\nparams(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
