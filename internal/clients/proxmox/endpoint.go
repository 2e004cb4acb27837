package proxmox

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	defaultPort = "8006"
	apiPath     = "/api2/json"
)

// NormalizeEndpoint turns what a user types for a Proxmox VE endpoint into the
// base URL go-proxmox expects: https://HOST:PORT/api2/json. It accepts a bare
// host, host:port, an IPv6 literal with or without brackets, and full https
// URLs with or without the /api2/json suffix. The PVE API is served over
// HTTPS only, so any other scheme is rejected rather than silently kept.
func NormalizeEndpoint(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", errors.New("endpoint is empty")
	}
	u, err := parseEndpointURL(s)
	if err != nil {
		return "", err
	}
	if err := checkEndpointParts(u); err != nil {
		return "", err
	}
	host, port, err := endpointHostPort(u)
	if err != nil {
		return "", err
	}
	return "https://" + net.JoinHostPort(host, port) + apiPath, nil
}

// parseEndpointURL parses s, adding the https scheme when the user typed none.
// A bare IPv6 literal ("fd00::1") is bracketed first, because its colons would
// otherwise be read as a port separator.
func parseEndpointURL(s string) (*url.URL, error) {
	scheme, rest, hasScheme := strings.Cut(s, "://")
	if !hasScheme {
		if ip := net.ParseIP(s); ip != nil && strings.Contains(s, ":") {
			s = "[" + s + "]"
		}
		s = "https://" + s
	} else {
		scheme = strings.ToLower(scheme)
		if scheme != "https" {
			return nil, errors.Errorf("endpoint %q uses scheme %q: the Proxmox VE API is served over https only (use https:// or omit the scheme)", redactUserinfo(s), scheme)
		}
		s = "https://" + rest
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, errors.Errorf("endpoint %q is not a valid URL", redactUserinfo(s))
	}
	return u, nil
}

// checkEndpointParts rejects URL parts that have no place in a PVE endpoint.
// Credentials in the URL are refused so they never end up in status or logs
// through the normalised endpoint.
func checkEndpointParts(u *url.URL) error {
	if u.User != nil {
		return errors.New("endpoint must not contain credentials (user:password@); use the connection's credential fields")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return errors.Errorf("endpoint %q must not contain a query or fragment", u.Redacted())
	}
	if p := strings.TrimRight(u.Path, "/"); p != "" && p != apiPath {
		return errors.Errorf("endpoint %q has path %q: only %s (or no path) is allowed", u.Redacted(), u.Path, apiPath)
	}
	return nil
}

func endpointHostPort(u *url.URL) (string, string, error) {
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", "", errors.Errorf("endpoint %q has no host", u.Redacted())
	}
	if !validHost(host) {
		return "", "", errors.Errorf("endpoint host %q is neither a DNS name nor an IP address", host)
	}
	port := u.Port()
	if port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return "", "", errors.Errorf("endpoint %q has an empty port", u.Redacted())
		}
		return host, defaultPort, nil
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", "", errors.Errorf("endpoint %q has invalid port %q", u.Redacted(), port)
	}
	return host, strconv.Itoa(n), nil
}

func validHost(host string) bool {
	if net.ParseIP(host) != nil {
		return true
	}
	if len(host) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if !validLabel(label) {
			return false
		}
	}
	return true
}

func validLabel(label string) bool {
	if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
		return false
	}
	for _, r := range label {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '_' {
			return false
		}
	}
	return true
}

// redactUserinfo hides anything before an '@' in the authority, for error
// messages about URLs that failed to parse (url.Redacted needs a parsed URL).
func redactUserinfo(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	authority, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		authority = "xxxxx@" + authority[i+1:]
	}
	if path != "" {
		return scheme + "://" + authority + "/" + path
	}
	return scheme + "://" + authority
}
