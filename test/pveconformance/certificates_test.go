package pveconformance

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A node's custom certificate (pve-manager PVE/API2/Certificates.pm
// upload_custom_cert, remove_custom_cert, info): uploaded as PEM with its
// key, listed by info as pveproxy-ssl.pem with its fingerprint and SANs,
// removed with DELETE. restart=0 leaves pveproxy serving what it served, so
// a real run never changes the served certificate; it refuses a node that
// already has a custom certificate.
func TestCustomCertificateUploadInfoDelete(t *testing.T) {
	tg := target(t, pvesim.Options{})
	node := tg.Config().CertNode
	if node == "" {
		t.Skipf("needs a node whose custom certificate the suite may set and remove: set %s", EnvCertNode)
	}
	covers(tg, "GET /nodes/{node}/certificates/info", "POST /nodes/{node}/certificates/custom certificates key force restart",
		"DELETE /nodes/{node}/certificates/custom restart")
	base := "/nodes/" + url.PathEscape(node) + "/certificates"
	if fingerprintOf(tg, node) != "" {
		t.Skipf("node %s already has a custom certificate; the suite will not replace it", node)
	}
	cert, key, err := SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	res := tg.raw(http.MethodPost, base+"/custom", Params("certificates", cert, "key", key, "force", "0", "restart", "0"))
	if res.Status != http.StatusOK {
		t.Fatalf("upload: %s %s", res.StatusLine, res.Text)
	}
	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		_, _ = tg.Raw(ctx, http.MethodDelete, base+"/custom", Params("restart", "0"))
	})
	if fingerprintOf(tg, node) == "" {
		t.Fatal("info does not list the custom certificate")
	}
	if res := tg.raw(http.MethodDelete, base+"/custom", Params("restart", "0")); res.Status != http.StatusOK {
		t.Fatalf("delete: %s %s", res.StatusLine, res.Text)
	}
	if fingerprintOf(tg, node) != "" {
		t.Error("custom certificate still listed after delete")
	}
}

func fingerprintOf(tg *tcase, node string) string {
	tg.t.Helper()
	fp, err := tg.CustomCertificateFingerprint(tg.ctx(), node)
	if err != nil {
		tg.t.Fatal(err)
	}
	return fp
}
