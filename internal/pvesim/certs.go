package pvesim

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Node certificates: GET info, POST/DELETE custom. An uploaded certificate with key is
// really served (after "restart", which pveproxy does at once here), so a client can
// pin or verify it; DELETE goes back to the simulator's own certificate.

func registerCertRoutes(r *router) {
	base := "/nodes/{node}/certificates"
	r.handle(RouteSpec{Method: http.MethodGet, Path: base + "/info", Params: []ParamSpec{pNode()}}, handleCertInfo).unlocked = true
	r.handle(RouteSpec{Method: http.MethodPost, Path: base + "/custom", Params: []ParamSpec{
		pNode(), pString("certificates").req(), pString("key"), pBool("force"), pBool("restart"),
	}}, handleCertUpload).unlocked = true
	r.handle(RouteSpec{Method: http.MethodDelete, Path: base + "/custom", Params: []ParamSpec{pNode(), pBool("restart")}}, handleCertDelete).unlocked = true
}

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
	san := make([]string, 0, len(c.DNSNames)+len(c.IPAddresses))
	for _, d := range c.DNSNames {
		san = append(san, "DNS:"+d)
	}
	for _, ip := range c.IPAddresses {
		san = append(san, "IP Address:"+ip.String())
	}
	keyType, bits := publicKeyInfo(c)
	return map[string]any{
		"filename": filename, "fingerprint": strings.Join(fp, ":"), "issuer": "/" + strings.ReplaceAll(c.Issuer.String(), ",", "/"),
		"subject": "/" + strings.ReplaceAll(c.Subject.String(), ",", "/"), "notbefore": c.NotBefore.Unix(), "notafter": c.NotAfter.Unix(),
		"pem": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})), "san": san,
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

// parseCertChain is the pem-certificate-chain format check plus PVE's certificate parsing.
func parseCertChain(text string) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := []byte(strings.TrimSpace(text))
	for len(rest) > 0 {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil || block.Type != "CERTIFICATE" {
			return nil, errParam("certificates", "invalid format - Malformed PEM certificate chain")
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, errInternal("unable to parse certificate - %s", err.Error())
		}
		certs = append(certs, c)
		rest = []byte(strings.TrimSpace(string(rest)))
	}
	if len(certs) == 0 {
		return nil, errParam("certificates", "invalid format - Malformed PEM certificate chain")
	}
	return certs, nil
}

func handleCertUpload(s *Server, r *request) (any, error) {
	if err := s.checkNodeLocked(r.node()); err != nil {
		return nil, err
	}
	certs, err := parseCertChain(r.str("certificates"))
	if err != nil {
		return nil, err
	}
	existing := s.custom.get(r.node())
	if !r.has("key") {
		if existing == nil {
			return nil, errInternal("Attempted to upload custom certificate without (existing) key.")
		}
		return nil, errInternal("Custom certificate exists but 'force' is not set.")
	}
	if !strings.Contains(r.str("key"), "PRIVATE KEY-----") {
		return nil, errParam("key", "invalid format - Malformed PEM key")
	}
	pair, err := tls.X509KeyPair([]byte(r.str("certificates")), []byte(r.str("key")))
	if err != nil {
		return nil, errInternal("Certificate and key do not match - %s", err.Error())
	}
	if existing != nil && !r.bool("force") {
		return nil, errInternal("Custom certificate exists but 'force' is not set.")
	}
	pair.Leaf = certs[0]
	s.custom.set(r.node(), &pair)
	if r.bool("restart") {
		// The listener stands for every node's pveproxy.
		s.cert.Store(&pair)
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
