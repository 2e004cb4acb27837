package pvesim

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// What upload_custom_cert checks of its input: the PEM formats of its schema
// (pve-common Certificate.pm check_pem), the certificate chain and whether
// OpenSSL takes the key for it (pve-manager CertHelpers.pm set_cert_files).

// msgNotPEM is JSONSchema.pm's "invalid format - $@" with check_pem's die text,
// newline included (the die is not chomped).
const msgNotPEM = "invalid format - not a valid PEM-formatted string.\n"

// pemRE is Certificate.pm's $pem_re for a label: header, base64 lines, footer.
func pemRE(label string) string {
	const b64 = `[0-9A-Za-z+/]`
	return `-----BEGIN ` + label + `-----\s*` +
		`(?:` + b64 + `+\s*\n)*` + b64 + `*(?:=\s*\n=|={0,2})?\s*\n` +
		`-----END ` + label + `-----\s*`
}

var (
	// reCertChain is the pem-certificate-chain format: one or more certificates.
	reCertChain = regexp.MustCompile(`^(?:(?:` + pemRE("CERTIFICATE") + `\n+)*` + pemRE("CERTIFICATE") + `)\n?$`)
	// rePEMString is the pem-string format: one PEM block of any label.
	rePEMString = regexp.MustCompile(`^(?:` + pemRE(`.*?`) + `)\n?$`)
	// reLeadingText is what strip_leading_text removes: all before the first header.
	reLeadingText = regexp.MustCompile(`(?s)^.*?(-{5}BEGIN .*?-{5})`)
)

func stripLeadingText(s string) string { return reLeadingText.ReplaceAllString(s, "$1") }

// checkCertUploadFormats is the schema check of certificates (pem-certificate-chain)
// and key (pem-string): both errors are reported together, as a 400.
func checkCertUploadFormats(r *request) error {
	errs := map[string]string{}
	if !reCertChain.MatchString(stripLeadingText(r.str("certificates"))) {
		errs["certificates"] = msgNotPEM
	}
	if r.has("key") && !rePEMString.MatchString(stripLeadingText(r.str("key"))) {
		errs["key"] = msgNotPEM
	}
	if len(errs) > 0 {
		return errParams(errs)
	}
	return nil
}

// parseCertChain parses every certificate of a chain that passed the format check.
func parseCertChain(text string) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := []byte(text)
	for {
		block, next := pem.Decode(rest)
		if block == nil {
			break
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, errors.Wrap(err, "cannot parse certificate")
		}
		certs = append(certs, c)
		rest = next
	}
	if len(certs) == 0 {
		return nil, errors.New("no certificate")
	}
	return certs, nil
}

// parsePrivateKey reads a PKCS#8, PKCS#1 or SEC 1 private key.
func parsePrivateKey(text string) (crypto.PrivateKey, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParseECPrivateKey(block.Bytes)
	return k, errors.Wrap(err, "cannot parse private key")
}

// keyKind is OpenSSL's certificate slot for a key: a key is checked against
// the certificate only when both fall in the same slot.
func keyKind(pub crypto.PublicKey) string {
	switch pub.(type) {
	case *rsa.PublicKey:
		return "rsa"
	case *ecdsa.PublicKey:
		return "ec"
	case ed25519.PublicKey:
		return "ed25519"
	}
	return "other"
}

type publicKeyer interface {
	Public() crypto.PublicKey
}

type equaler interface {
	Equal(crypto.PublicKey) bool
}

// keyMatches reports whether key is the certificate's private key.
func keyMatches(c *x509.Certificate, key crypto.PrivateKey) bool {
	k, ok := key.(publicKeyer)
	if !ok {
		return false
	}
	pub, ok := c.PublicKey.(equaler)
	return ok && pub.Equal(k.Public())
}

func sameKind(c *x509.Certificate, key crypto.PrivateKey) bool {
	k, ok := key.(publicKeyer)
	return ok && keyKind(c.PublicKey) == keyKind(k.Public())
}

// keyRefused is set_cert_files' check since pve-manager 9.1.10: OpenSSL's
// SSL_CTX_use_PrivateKey_file refuses a key of the certificate's type that is
// not its key. A key of another type lands in another slot and is accepted
// (so are both on older PVE, which does not load them at all).
func keyRefused(c *x509.Certificate, key crypto.PrivateKey) bool {
	return sameKind(c, key) && !keyMatches(c, key)
}

// keyServes reports whether pveproxy can serve the certificate with key.
func keyServes(c *x509.Certificate, key crypto.PrivateKey) bool {
	return sameKind(c, key) && keyMatches(c, key)
}

// errKeyMismatch is set_cert_files' die: Net::SSLeay's die_now prefixes the
// worker's pid; the errno PVE appends in parentheses is left out.
func errKeyMismatch() error {
	return errInternal("Setting certificate files failed - %d: key does not match the certificate (chain)", os.Getpid())
}

// sanEntries is get_certificate_info's san: DNS names and IP addresses as bare
// values (types 2 and 7 of X509_get_subjectAltNames; others are skipped), an
// IPv6 address as eight groups of four hex digits.
func sanEntries(c *x509.Certificate) []string {
	san := make([]string, 0, len(c.DNSNames)+len(c.IPAddresses))
	san = append(san, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		if v4 := ip.To4(); v4 != nil {
			san = append(san, v4.String())
			continue
		}
		groups := make([]string, 8)
		for i := range groups {
			groups[i] = fmt.Sprintf("%02x%02x", ip[2*i], ip[2*i+1])
		}
		san = append(san, strings.Join(groups, ":"))
	}
	return san
}
