package proxmox

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"

	"github.com/luthermonson/go-proxmox"
)

// FailureReason names why a connection cannot be used; the connection
// controller puts it in its Ready condition.
type FailureReason string

// Failure reasons returned by Classify.
const (
	AuthenticationFailed  FailureReason = "AuthenticationFailed"
	EndpointUnreachable   FailureReason = "EndpointUnreachable"
	TLSVerificationFailed FailureReason = "TLSVerificationFailed"
	OtherFailure          FailureReason = ""
)

// Classify maps an error from this package (or from go-proxmox through API())
// to a FailureReason; "" when it is none of the known kinds.
func Classify(err error) FailureReason {
	switch {
	case err == nil, errors.Is(err, ErrClientRetired):
		return OtherFailure
	case isTLSVerificationError(err):
		return TLSVerificationFailed
	case isAuthError(err):
		return AuthenticationFailed
	case isUnreachable(err):
		return EndpointUnreachable
	}
	return OtherFailure
}

// isAuthError: 401 is a rejected ticket, token or login; 403 a credential
// PVE knows but that may not do this (for GET /version, a token whose user
// lost its access). Both mean the configured credential does not work.
func isAuthError(err error) bool {
	apiErr, ok := proxmox.AsAPIError(err)
	if ok {
		return apiErr.StatusCode == http.StatusUnauthorized || apiErr.StatusCode == http.StatusForbidden
	}
	return errors.Is(err, proxmox.ErrNotAuthorized)
}

// gatewayStatus are answers of a proxy in front of PVE that could not reach it.
var gatewayStatus = map[int]bool{
	http.StatusBadGateway:         true,
	http.StatusServiceUnavailable: true,
	http.StatusGatewayTimeout:     true,
}

func isUnreachable(err error) bool {
	if apiErr, ok := proxmox.AsAPIError(err); ok {
		return gatewayStatus[apiErr.StatusCode]
	}
	var (
		opErr  *net.OpError
		dnsErr *net.DNSError
		netErr net.Error
		recErr tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &opErr), errors.As(err, &dnsErr), errors.As(err, &recErr):
		return true
	case errors.As(err, &netErr) && netErr.Timeout():
		return true
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return true
	}
	// net/http replaces the TLS record error with a plain string when the
	// endpoint speaks plain HTTP.
	return strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}

// redact hides the client's secrets should any ever appear in an error's
// text. PVE and go-proxmox do not echo credentials today; this keeps it so
// even if a proxy or a future library version does. errors.Is and errors.As
// still see the original chain.
func (c *Client) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	redacted := c.scrub(msg)
	if redacted == msg {
		return err
	}
	return &redactedError{msg: redacted, cause: err}
}

// scrub hides the client's secrets (credential, ticket, CSRF token) in a
// text PVE wrote, such as a task's exit status or log.
func (c *Client) scrub(text string) string {
	secrets := c.secrets
	if c.session != nil {
		c.session.mu.Lock()
		if c.session.cur != nil {
			secrets = append(append([]string{}, secrets...), c.session.cur.value, c.session.cur.csrf)
		}
		c.session.mu.Unlock()
	}
	return Scrub(text, secrets...)
}

// reSecretAssignment finds a credential written as key=value (a drive or
// command line PVE echoes): the value is hidden whatever it is.
var reSecretAssignment = regexp.MustCompile(`(?i)\b((?:ci)?password|secret|PVEAPIToken|PVEAuthCookie|CSRFPreventionToken)=[^\s,;'"]+`)

// reURLPassword finds the password of a URL's user information
// ("https://user:pass@host/", as a download task logs its URL).
var reURLPassword = regexp.MustCompile(`(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]*:)[^\s/@]+@`)

// Scrub hides each of secrets, any key=value credential and any URL
// password in text.
func Scrub(text string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	text = reURLPassword.ReplaceAllString(text, "$1[redacted]@")
	return reSecretAssignment.ReplaceAllString(text, "$1=[redacted]")
}

type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }
