package pvesim

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"sync"
)

// Node certificates: GET info, POST/DELETE custom (pve-manager API2/Certificates.pm info,
// upload_custom_cert, remove_custom_cert; CertHelpers.pm set_cert_files). An uploaded
// certificate with key is really served (after "restart", which pveproxy does at once
// here), so a client can pin or verify it; DELETE goes back to the simulator's own.

func (s *Server) checkNodeLocked(node string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.checkNode(node)
}

// customCerts are the custom certificate files of each node.
type customCerts struct {
	mu     sync.Mutex
	byNode map[string]*tls.Certificate
}

func (c *customCerts) get(node string) *tls.Certificate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byNode[node]
}

func (c *customCerts) set(node string, pair *tls.Certificate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byNode == nil {
		c.byNode = map[string]*tls.Certificate{}
	}
	if pair == nil {
		delete(c.byNode, node)
		return
	}
	c.byNode[node] = pair
}

func handleCertInfo(s *Server, r *request) (any, error) {
	if err := s.checkNodeLocked(r.node()); err != nil {
		return nil, err
	}
	out := []map[string]any{certInfo("pve-root-ca.pem", s.ca.cert)}
	if leaf := leafOf(s.defCert); leaf != nil {
		out = append(out, certInfo("pve-ssl.pem", leaf))
	}
	if leaf := leafOf(s.custom.get(r.node())); leaf != nil {
		out = append(out, certInfo("pveproxy-ssl.pem", leaf))
	}
	return out, nil
}

func leafOf(c *tls.Certificate) *x509.Certificate {
	if c == nil || len(c.Certificate) == 0 {
		return nil
	}
	if c.Leaf != nil {
		return c.Leaf
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		return nil
	}
	return leaf
}

// certInfo is PVE::Certificate::get_certificate_info's entry.
func certInfo(filename string, c *x509.Certificate) map[string]any {
	sum := sha256.Sum256(c.Raw)
	fp := make([]string, len(sum))
	for i, b := range sum {
		fp[i] = fmt.Sprintf("%02X", b)
	}
	keyType, bits := publicKeyInfo(c)
	return map[string]any{
		"filename": filename, "fingerprint": strings.Join(fp, ":"), "issuer": "/" + strings.ReplaceAll(c.Issuer.String(), ",", "/"),
		"subject": "/" + strings.ReplaceAll(c.Subject.String(), ",", "/"), "notbefore": c.NotBefore.Unix(), "notafter": c.NotAfter.Unix(),
		"pem": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})), "san": sanEntries(c),
		"public-key-type": keyType, "public-key-bits": bits,
	}
}

func publicKeyInfo(c *x509.Certificate) (string, int) {
	switch k := c.PublicKey.(type) {
	case *rsa.PublicKey:
		return "rsaEncryption", k.N.BitLen()
	case *ecdsa.PublicKey:
		return "id-ecPublicKey", k.Curve.Params().BitSize
	case ed25519.PublicKey:
		return "ED25519", 256
	}
	return "unknown", 0
}

func handleCertUpload(s *Server, r *request) (any, error) {
	if err := s.checkNodeLocked(r.node()); err != nil {
		return nil, err
	}
	if err := checkCertUploadFormats(r); err != nil {
		return nil, err
	}
	node := r.node()
	existing := s.custom.get(node)
	var key crypto.PrivateKey
	if r.str("key") == "" {
		if existing == nil || existing.PrivateKey == nil {
			return nil, errParam("key", "Attempted to upload custom certificate without (existing) key.")
		}
		key = existing.PrivateKey
	}
	if existing != nil && !r.bool("force") {
		return nil, errInternal("Custom certificate file exists but force flag is not set.")
	}
	certs, err := parseCertChain(stripLeadingText(r.str("certificates")))
	if err != nil {
		return nil, errInternal("Setting certificate files failed - unable to read certificate from '/etc/pve/nodes/%s/pveproxy-ssl.pem'", node)
	}
	if key == nil {
		if key, err = parsePrivateKey(stripLeadingText(r.str("key"))); err != nil {
			return nil, errKeyMismatch()
		}
	}
	if keyRefused(certs[0], key) {
		return nil, errKeyMismatch()
	}
	pair := &tls.Certificate{Leaf: certs[0], PrivateKey: key}
	for _, c := range certs {
		pair.Certificate = append(pair.Certificate, c.Raw)
	}
	s.custom.set(node, pair)
	if r.bool("restart") && keyServes(certs[0], key) {
		// The listener stands for every node's pveproxy. A key of another type than the
		// certificate's is accepted by PVE but serves nothing: the old one stays here.
		s.cert.Store(pair)
		r.restartsProxy = true
	}
	return certInfo("pveproxy-ssl.pem", certs[0]), nil
}

func handleCertDelete(s *Server, r *request) (any, error) {
	if err := s.checkNodeLocked(r.node()); err != nil {
		return nil, err
	}
	s.custom.set(r.node(), nil)
	if r.bool("restart") {
		s.cert.Store(s.defCert)
		r.restartsProxy = true
	}
	return nil, nil
}
