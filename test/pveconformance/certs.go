package pveconformance

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SelfSigned makes a certificate for pvecf.invalid, valid for an hour, and
// its key, PEM encoded: what the certificate cases upload.
func SelfSigned() (certPEM, keyPEM string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generate a key: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: "pvecf.invalid"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"pvecf.invalid"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", fmt.Errorf("sign the certificate: %w", err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", fmt.Errorf("encode the key: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})), nil
}

// CustomCertificateFingerprint is the fingerprint node's certificates/info
// lists for its custom certificate (pveproxy-ssl.pem), "" without one.
func (tg *Target) CustomCertificateFingerprint(ctx context.Context, node string) (string, error) {
	res, err := tg.Raw(ctx, http.MethodGet, "/nodes/"+url.PathEscape(node)+"/certificates/info", nil)
	if err != nil {
		return "", err
	}
	var infos []struct {
		Filename    string `json:"filename"`
		Fingerprint string `json:"fingerprint"`
	}
	if res.Status != http.StatusOK {
		return "", fmt.Errorf("certificates of %s: %s", node, res.StatusLine)
	}
	if err := res.Data(&infos); err != nil {
		return "", err
	}
	for _, i := range infos {
		if i.Filename == "pveproxy-ssl.pem" {
			return strings.ToUpper(i.Fingerprint), nil
		}
	}
	return "", nil
}
