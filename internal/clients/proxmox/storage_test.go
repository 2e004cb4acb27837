package proxmox

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
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

// StorageContent and VolumePath read what the template's image step decides
// on, and MayImportPaths holds for root@pam's password session alone.
func TestSimStorageContentAndVolumePath(t *testing.T) {
	srv := startSim(t, pvesim.Options{Nodes: []string{"pve"}})
	if err := srv.SetStorageContent("local", "iso", "vztmpl"); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddFile("pve", "local:iso/noble.img", 1<<30); err != nil {
		t.Fatal(err)
	}
	root, _ := simClient(t, srv, nil)
	token, _ := simClient(t, srv, useToken)
	ctx := context.Background()
	content, err := token.StorageContent(ctx, "pve", "local")
	if err != nil || !cmp.Equal(content, []string{"iso", "vztmpl"}) {
		t.Errorf("StorageContent: %v, %v; want [iso vztmpl]", content, err)
	}
	p, err := token.VolumePath(ctx, "pve", "local:iso/noble.img")
	if err != nil || p != "/var/lib/vz/template/iso/noble.img" {
		t.Errorf("VolumePath: %q, %v; want /var/lib/vz/template/iso/noble.img", p, err)
	}
	if _, err := token.VolumePath(ctx, "pve", "local:iso/absent.img"); err == nil {
		t.Error("VolumePath of an absent volume: no error")
	}
	if !root.MayImportPaths() || token.MayImportPaths() {
		t.Errorf("MayImportPaths: root@pam password %v, root@pam token %v; want true, false", root.MayImportPaths(), token.MayImportPaths())
	}
}
