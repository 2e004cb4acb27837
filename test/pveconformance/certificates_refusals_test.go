package pveconformance

import (
	"encoding/pem"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testcert"
)

// certNode is the node whose custom certificate a case may set and remove,
// after checking it has none; every upload it makes is removed when it ends
// (restart=0 throughout, so pveproxy keeps serving what it served).
func (c *tcase) certNode() string {
	c.t.Helper()
	node := c.Config().CertNode
	if node == "" {
		c.t.Skipf("needs a node whose custom certificate the suite may set and remove: set %s", EnvCertNode)
	}
	if fingerprintOf(c, node) != "" {
		c.t.Skipf("node %s already has a custom certificate; the suite will not replace it", node)
	}
	c.t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		_, _ = c.Raw(ctx, http.MethodDelete, "/nodes/"+url.PathEscape(node)+"/certificates/custom", Params("restart", "0"))
	})
	return node
}

func (c *tcase) uploadCert(node string, kv ...string) Response {
	c.t.Helper()
	return c.raw(http.MethodPost, "/nodes/"+url.PathEscape(node)+"/certificates/custom", Params(append([]string{"restart", "0"}, kv...)...))
}

// certInfos is GET .../certificates/info by file name.
func (c *tcase) certInfos(node string) map[string]map[string]any {
	c.t.Helper()
	var list []map[string]any
	c.data("/nodes/"+url.PathEscape(node)+"/certificates/info", nil, &list)
	out := map[string]map[string]any{}
	for _, i := range list {
		out[i["filename"].(string)] = i
	}
	return out
}

// upload_custom_cert (pve-manager PVE/API2/Certificates.pm) refuses before
// writing anything: certificates has format pem-certificate-chain and key
// pem-string (pve-common src/PVE/Certificate.pm check_pem dies "not a valid
// PEM-formatted string.\n", which pve-common src/PVE/JSONSchema.pm reports as
// "invalid format - $@"); no key without a key file there is
// raise_param_exc on key; pve-manager PVE/CertHelpers.pm set_cert_files dies
// "Custom certificate file exists but force flag is not set." without force,
// and (since pve-manager 9.1.10, commit 76660ff2) when OpenSSL's
// CTX_use_PrivateKey_file refuses the key: "Setting certificate files failed -
// <pid>: key does not match the certificate (chain) (...)".
func TestCertificateUploadRefusals(t *testing.T) {
	crt, key := testcert.Pair(t, testcert.EC(t))
	_, otherKey := testcert.Pair(t, testcert.EC(t))
	cases := map[string]struct {
		reason string
		// existing uploads crt with key first.
		existing bool
		params   []string
		status   int
		message  string
		errors   map[string]string
	}{
		"CertificateNotPEM": {
			reason: "Certificates.pm upload_custom_cert: format pem-certificate-chain; Certificate.pm check_pem.",
			params: []string{"certificates", "garbage", "key", key},
			status: 400, message: "Parameter verification failed.\n",
			errors: map[string]string{"certificates": "invalid format - not a valid PEM-formatted string.\n"},
		},
		"KeyNotPEM": {
			reason: "Certificates.pm upload_custom_cert: key has format pem-string; Certificate.pm check_pem.",
			params: []string{"certificates", crt, "key", "not a key"},
			status: 400, message: "Parameter verification failed.\n",
			errors: map[string]string{"key": "invalid format - not a valid PEM-formatted string.\n"},
		},
		"NoKeyAndNoKeyFile": {
			reason: "Certificates.pm upload_custom_cert: raise_param_exc({key => ...}) if !-e \"${cert_prefix}.key\".",
			params: []string{"certificates", crt},
			status: 400, message: "Parameter verification failed.\n",
			errors: map[string]string{"key": "Attempted to upload custom certificate without (existing) key."},
		},
		"ExistsWithoutForce": {
			reason:   "CertHelpers.pm set_cert_files: die if !$force && -e $cert_path.",
			existing: true,
			params:   []string{"certificates", crt, "key", key},
			status:   500, message: "Custom certificate file exists but force flag is not set.\n",
		},
		"KeyOfAnotherCertificate": {
			reason: "CertHelpers.pm set_cert_files: CTX_use_PrivateKey_file or die_now(\"key does not match the certificate (chain) ($!)\").",
			params: []string{"certificates", crt, "key", otherKey},
			status: 500, message: "key does not match the certificate (chain)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := target(t, pvesim.Options{})
			covers(tg, "POST /nodes/{node}/certificates/custom certificates restart", "GET /nodes/{node}/certificates/info")
			node := tg.certNode()
			if tc.existing {
				if res := tg.uploadCert(node, "certificates", crt, "key", key); res.Status != http.StatusOK {
					t.Fatalf("first upload: %s %s", res.StatusLine, res.Text)
				}
			}
			res := tg.uploadCert(node, tc.params...)
			if res.Status != tc.status || !strings.Contains(res.Message(), tc.message) {
				t.Errorf("%s\nanswer %s %q, want %d %q", tc.reason, res.StatusLine, res.Message(), tc.status, tc.message)
			}
			if tc.errors != nil {
				if diff := cmp.Diff(tc.errors, res.Errors()); diff != "" {
					t.Errorf("%s\nerrors (-want +got):\n%s", tc.reason, diff)
				}
			}
			if _, written := tg.certInfos(node)["pveproxy-ssl.pem"]; written != tc.existing {
				t.Errorf("%s\ncustom certificate listed = %v, want %v: a refusal writes nothing", tc.reason, written, tc.existing)
			}
		})
	}
}

// OpenSSL checks a key only against the certificate of its own type (its
// SSL_CTX_use_PrivateKey fills the slot of the key's type), so set_cert_files
// (pve-manager PVE/CertHelpers.pm) accepts an EC key for an RSA certificate;
// before pve-manager 9.1.10 it loaded neither. Without key, force reuses the
// key file there (Certificates.pm upload_custom_cert passes no key to
// set_cert_files, which then writes none).
func TestCertificateUploadsPVEAccepts(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/certificates/custom certificates key force restart", "GET /nodes/{node}/certificates/info")
	node := tg.certNode()
	rsaCrt, _ := testcert.Pair(t, testcert.RSA(t))
	_, ecOnly := testcert.Pair(t, testcert.EC(t))
	if res := tg.uploadCert(node, "certificates", rsaCrt, "key", ecOnly); res.Status != http.StatusOK {
		t.Fatalf("an EC key for an RSA certificate: %s %q, want it accepted as OpenSSL takes it", res.StatusLine, res.Message())
	}
	key := testcert.EC(t)
	crt, keyPEM := testcert.Pair(t, key)
	if res := tg.uploadCert(node, "certificates", crt, "key", keyPEM, "force", "1"); res.Status != http.StatusOK {
		t.Fatalf("force over an existing one: %s %q", res.StatusLine, res.Message())
	}
	renewed, _ := testcert.Pair(t, key)
	if res := tg.uploadCert(node, "certificates", renewed, "force", "1"); res.Status != http.StatusOK {
		t.Fatalf("a renewal with the key file there: %s %q", res.StatusLine, res.Message())
	}
	block, _ := pem.Decode([]byte(renewed))
	got := tg.certInfos(node)["pveproxy-ssl.pem"]
	if got == nil || got["pem"] != string(pem.EncodeToMemory(block)) {
		t.Fatalf("info after the renewal: %v, want the renewed certificate", got)
	}
}

// get_certificate_info (pve-common src/PVE/Certificate.pm) lists san entries as
// bare values: $parse_san keeps types 2 (DNS) and 7 (IP) of
// X509_get_subjectAltNames, an IPv4 address dotted, an IPv6 one as eight
// groups of unpack("H4"), no "DNS:" prefix.
func TestCertificateInfoSANIsBareValues(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/certificates/custom certificates key restart", "GET /nodes/{node}/certificates/info")
	node := tg.certNode()
	crt, key := testcert.Pair(t, testcert.EC(t))
	res := tg.uploadCert(node, "certificates", crt, "key", key)
	if res.Status != http.StatusOK {
		t.Fatalf("upload: %s %s", res.StatusLine, res.Text)
	}
	want := []any{"pve.example", "localhost", "127.0.0.1", "fd00:0000:0000:0000:0000:0000:0000:0001"}
	var uploaded map[string]any
	if err := res.Data(&uploaded); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, uploaded["san"]); diff != "" {
		t.Errorf("upload answer's san (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, tg.certInfos(node)["pveproxy-ssl.pem"]["san"]); diff != "" {
		t.Errorf("info's san (-want +got):\n%s", diff)
	}
}
