package proxmox

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/url"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// CustomCertificateFile is the file PVE keeps a node's custom pveproxy
// certificate in; its own is pve-ssl.pem.
const CustomCertificateFile = "pveproxy-ssl.pem"

// CertificateInfo is one certificate of GET /nodes/{node}/certificates/info.
type CertificateInfo struct {
	Filename string
	// Fingerprint is the SHA-256 of the certificate, upper-case hex in
	// colon-separated pairs, as PVE prints it.
	Fingerprint string
	Subject     string
	NotAfter    int64
}

// Certificates lists a node's certificates (CA, its own, and the custom one
// when uploaded).
func (c *Client) Certificates(ctx context.Context, node string) ([]CertificateInfo, error) {
	var raw []struct {
		Filename    wireText `json:"filename"`
		Fingerprint wireText `json:"fingerprint"`
		Subject     wireText `json:"subject"`
		NotAfter    wireInt  `json:"notafter"`
	}
	if err := c.API().Get(ctx, "/nodes/"+url.PathEscape(node)+"/certificates/info", &raw); err != nil {
		return nil, errors.Wrapf(err, "cannot read the certificates of node %s", node)
	}
	out := make([]CertificateInfo, 0, len(raw))
	for _, r := range raw {
		out = append(out, CertificateInfo{Filename: string(r.Filename), Fingerprint: string(r.Fingerprint), Subject: string(r.Subject), NotAfter: int64(r.NotAfter)})
	}
	return out, nil
}

// UploadCertificate writes a node's custom certificate (a PEM chain, leaf
// first) and key; force replaces one already there, restart restarts
// pveproxy so it serves the new one.
func (c *Client) UploadCertificate(ctx context.Context, node, chainPEM, keyPEM string, force, restart bool) error {
	p := map[string]string{"certificates": chainPEM, "key": keyPEM, "force": pveBool(force), "restart": pveBool(restart)}
	var raw json.RawMessage
	if err := c.API().Post(ctx, "/nodes/"+url.PathEscape(node)+"/certificates/custom", p, &raw); err != nil {
		return errors.Wrapf(err, "cannot upload the custom certificate of node %s", node)
	}
	return nil
}

// IsCustomCertificatePresent reports PVE's refusal to replace a node's
// custom certificate (or its key) without force: pve-manager's
// CertHelpers.pm set_cert_files dies "Custom certificate file exists but
// force flag is not set." (or "... key file exists ...").
func IsCustomCertificatePresent(err error) bool {
	return err != nil && strings.Contains(apiMessage(err), "file exists but force flag is not set")
}

// DeleteCertificate removes a node's custom certificate; PVE falls back to
// its own (served after the restart).
func (c *Client) DeleteCertificate(ctx context.Context, node string, restart bool) error {
	path := "/nodes/" + url.PathEscape(node) + "/certificates/custom"
	if restart {
		path += "?restart=1"
	}
	if err := c.API().Delete(ctx, path, nil); err != nil {
		return errors.Wrapf(err, "cannot delete the custom certificate of node %s", node)
	}
	return nil
}

// Fingerprint is the leaf certificate's SHA-256 fingerprint of a PEM chain,
// in PVE's notation.
func Fingerprint(chainPEM string) (string, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(chainPEM)))
	if block == nil || block.Type != "CERTIFICATE" {
		return "", errors.New("not a PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", errors.Wrap(err, "cannot parse the certificate")
	}
	sum := sha256.Sum256(cert.Raw)
	pairs := make([]string, len(sum))
	for i, b := range sum {
		pairs[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(pairs, ":"), nil
}
