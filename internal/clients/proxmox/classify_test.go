package proxmox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/luthermonson/go-proxmox"
)

func urlErr(err error) error {
	return &url.Error{Op: "Get", URL: "https://pve:8006/api2/json/version", Err: err}
}

func TestClassify(t *testing.T) {
	cert := &x509.Certificate{}
	cases := map[string]struct {
		err  error
		want FailureReason
	}{
		"nil":     {nil, OtherFailure},
		"retired": {urlErr(ErrClientRetired), OtherFailure},
		"plain":   {errors.New("boom"), OtherFailure},
		"unknown authority": {
			urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{Cert: cert}}), TLSVerificationFailed,
		},
		"bare unknown authority": {fmt.Errorf("wrapped: %w", x509.UnknownAuthorityError{}), TLSVerificationFailed},
		"hostname mismatch": {
			urlErr(&tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: cert, Host: "pve"}}), TLSVerificationFailed,
		},
		"bare hostname":   {x509.HostnameError{Certificate: cert, Host: "x"}, TLSVerificationFailed},
		"expired":         {x509.CertificateInvalidError{Cert: cert, Reason: x509.Expired}, TLSVerificationFailed},
		"login 401":       {urlErr(fmt.Errorf("login as root@pam failed: %w", &proxmox.APIError{StatusCode: 401, Status: "401 authentication failure", Method: "POST", Path: "/api2/json/access/ticket"})), AuthenticationFailed},
		"token 401":       {fmt.Errorf("cannot read version: %w", &proxmox.APIError{StatusCode: 401, Status: "401 Authentication failed!"}), AuthenticationFailed},
		"403":             {&proxmox.APIError{StatusCode: 403, Status: "403 Permission check failed"}, AuthenticationFailed},
		"sentinel":        {fmt.Errorf("x: %w", proxmox.ErrNotAuthorized), AuthenticationFailed},
		"500 not found":   {&proxmox.APIError{StatusCode: 500, Status: "500 does not exist"}, OtherFailure},
		"400":             {&proxmox.APIError{StatusCode: 400, Status: "400 Parameter verification failed."}, OtherFailure},
		"595":             {&proxmox.APIError{StatusCode: 595, Status: "595 Connection refused"}, OtherFailure},
		"502 from proxy":  {&proxmox.APIError{StatusCode: 502, Status: "502 Bad Gateway"}, EndpointUnreachable},
		"503":             {&proxmox.APIError{StatusCode: 503, Status: "503 Service Unavailable"}, EndpointUnreachable},
		"refused":         {urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), EndpointUnreachable},
		"bare refused":    {fmt.Errorf("x: %w", syscall.ECONNREFUSED), EndpointUnreachable},
		"reset":           {fmt.Errorf("x: %w", syscall.ECONNRESET), EndpointUnreachable},
		"no route":        {fmt.Errorf("x: %w", syscall.EHOSTUNREACH), EndpointUnreachable},
		"dns":             {urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "pve.invalid", IsNotFound: true}}), EndpointUnreachable},
		"bare dns":        {&net.DNSError{Err: "no such host", Name: "pve.invalid"}, EndpointUnreachable},
		"deadline":        {urlErr(context.DeadlineExceeded), EndpointUnreachable},
		"timeout":         {urlErr(timeoutError{}), EndpointUnreachable},
		"eof":             {urlErr(io.EOF), EndpointUnreachable},
		"unexpected eof":  {urlErr(io.ErrUnexpectedEOF), EndpointUnreachable},
		"plain http port": {urlErr(errors.New("http: server gave HTTP response to HTTPS client")), EndpointUnreachable},
		"not tls":         {urlErr(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), EndpointUnreachable},
		"canceled":        {urlErr(context.Canceled), OtherFailure},
	}
	for name, tc := range cases {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("%s: Classify(%v) = %q, want %q", name, tc.err, got, tc.want)
		}
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestRedact(t *testing.T) {
	c, err := New(Config{Endpoint: "pve", TokenID: "root@pam!ci", Secret: "tok-secret-123"})
	if err != nil {
		t.Fatal(err)
	}
	cause := &proxmox.APIError{StatusCode: 401, Status: "401 bad token tok-secret-123"}
	got := c.redact(fmt.Errorf("echo: %w", cause))
	if strings.Contains(got.Error(), "tok-secret-123") {
		t.Fatalf("secret not redacted: %q", got)
	}
	if Classify(got) != AuthenticationFailed {
		t.Fatalf("redaction lost the classification: %q", Classify(got))
	}
	plain := errors.New("nothing to hide")
	if c.redact(plain) != plain { //nolint:errorlint // the very same error value must come back, not one wrapping it
		t.Fatal("an error without secrets should come back unchanged")
	}
}
