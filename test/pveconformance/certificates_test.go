package pveconformance

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

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
	if fingerprintOf(tg, base, "pveproxy-ssl.pem") != "" {
		t.Skipf("node %s already has a custom certificate; the suite will not replace it", node)
	}
	cert, key := selfSigned(t)
	res := tg.raw(http.MethodPost, base+"/custom", Params("certificates", cert, "key", key, "force", "0", "restart", "0"))
	if res.Status != http.StatusOK {
		t.Fatalf("upload: %s %s", res.StatusLine, res.Text)
	}
	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		_, _ = tg.Raw(ctx, http.MethodDelete, base+"/custom", Params("restart", "0"))
	})
	if fingerprintOf(tg, base, "pveproxy-ssl.pem") == "" {
		t.Fatal("info does not list the custom certificate")
	}
	if res := tg.raw(http.MethodDelete, base+"/custom", Params("restart", "0")); res.Status != http.StatusOK {
		t.Fatalf("delete: %s %s", res.StatusLine, res.Text)
	}
	if fingerprintOf(tg, base, "pveproxy-ssl.pem") != "" {
		t.Error("custom certificate still listed after delete")
	}
}

func fingerprintOf(tg *tcase, base, filename string) string {
	var infos []map[string]any
	tg.data(base+"/info", nil, &infos)
	for _, i := range infos {
		if i["filename"] == filename {
			fp, _ := i["fingerprint"].(string)
			return strings.ToUpper(fp)
		}
	}
	return ""
}

// selfSigned makes a certificate and key for pvecf.invalid, PEM encoded.
func selfSigned(t *testing.T) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: "pvecf.invalid"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"pvecf.invalid"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}
