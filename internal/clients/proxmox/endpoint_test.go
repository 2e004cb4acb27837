package proxmox

import (
	"strings"
	"testing"
)

func TestNormalizeEndpoint(t *testing.T) {
	ok := map[string]string{
		"pve.example.com":                         "https://pve.example.com:8006/api2/json",
		"  pve.example.com  ":                     "https://pve.example.com:8006/api2/json",
		"pve.example.com:8006":                    "https://pve.example.com:8006/api2/json",
		"pve.example.com:443":                     "https://pve.example.com:443/api2/json",
		"https://pve.example.com:8006":            "https://pve.example.com:8006/api2/json",
		"https://pve.example.com:8006/":           "https://pve.example.com:8006/api2/json",
		"https://pve.example.com:8006/api2/json":  "https://pve.example.com:8006/api2/json",
		"https://pve.example.com:8006/api2/json/": "https://pve.example.com:8006/api2/json",
		"https://pve.example.com/api2/json//":     "https://pve.example.com:8006/api2/json",
		"HTTPS://PVE.Example.COM":                 "https://pve.example.com:8006/api2/json",
		"pve.example.com/api2/json":               "https://pve.example.com:8006/api2/json",
		"pve.example.com.":                        "https://pve.example.com.:8006/api2/json",
		"pve":                                     "https://pve:8006/api2/json",
		"10.0.0.5":                                "https://10.0.0.5:8006/api2/json",
		"10.0.0.5:8443":                           "https://10.0.0.5:8443/api2/json",
		"https://10.0.0.5:08006":                  "https://10.0.0.5:8006/api2/json",
		"[::1]":                                   "https://[::1]:8006/api2/json",
		"::1":                                     "https://[::1]:8006/api2/json",
		"fd00::1":                                 "https://[fd00::1]:8006/api2/json",
		"FD00::A":                                 "https://[fd00::a]:8006/api2/json",
		"[fd00::1]:8006":                          "https://[fd00::1]:8006/api2/json",
		"[fd00::1]:9000":                          "https://[fd00::1]:9000/api2/json",
		"https://[fd00::1]":                       "https://[fd00::1]:8006/api2/json",
		"https://[fd00::1]:8006/api2/json":        "https://[fd00::1]:8006/api2/json",
		"https://[::ffff:10.0.0.1]/":              "https://[::ffff:10.0.0.1]:8006/api2/json",
	}
	for in, want := range ok {
		got, err := NormalizeEndpoint(in)
		if err != nil {
			t.Errorf("NormalizeEndpoint(%q): unexpected error %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("NormalizeEndpoint(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalizeEndpointRejects(t *testing.T) {
	bad := map[string]string{ // input -> a part the message must contain
		"":                                      "empty",
		"   ":                                   "empty",
		"http://pve.example.com":                "https",
		"HTTP://pve.example.com:8006/api2/json": "https",
		"ftp://pve.example.com":                 "https",
		"https://pve.example.com:8006/api2":     "path",
		"https://pve.example.com/api2/json/x":   "path",
		"pve.example.com/ui":                    "path",
		"https://pve.example.com:0":             "port",
		"https://pve.example.com:70000":         "port",
		"pve.example.com:":                      "port",
		"https://:8006":                         "no host",
		"https://":                              "no host",
		"https://pve.example.com?x=1":           "query",
		"https://pve.example.com#frag":          "fragment",
		"https://root:s3cr3tpw@pve.example.com": "credentials",
		"pve_bad host":                          "",
		"https://pve..example.com":              "neither",
		"https://-pve.example.com":              "neither",
		"https://[fd00::1":                      "",
		"https://[fd00::1]:abc":                 "",
	}
	for in, part := range bad {
		got, err := NormalizeEndpoint(in)
		if err == nil {
			t.Errorf("NormalizeEndpoint(%q) = %q, want an error", in, got)
			continue
		}
		if !strings.Contains(err.Error(), part) {
			t.Errorf("NormalizeEndpoint(%q) error %q does not mention %q", in, err, part)
		}
		if strings.Contains(err.Error(), "s3cr3tpw") {
			t.Errorf("NormalizeEndpoint(%q) error leaks the password: %q", in, err)
		}
	}
}

func FuzzNormalizeEndpoint(f *testing.F) {
	for _, s := range []string{"pve.example.com", "[::1]:8006", "https://h:8006/api2/json", "http://x", "::1", "https://u:p@h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormalizeEndpoint(in)
		if err != nil {
			return
		}
		if !strings.HasPrefix(out, "https://") || !strings.HasSuffix(out, ":"+lastPort(out)+"/api2/json") {
			t.Fatalf("NormalizeEndpoint(%q) = %q: not https://HOST:PORT/api2/json", in, out)
		}
		again, err := NormalizeEndpoint(out)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", in, out, again, err)
		}
	})
}

func lastPort(u string) string {
	s := strings.TrimSuffix(u, "/api2/json")
	return s[strings.LastIndex(s, ":")+1:]
}
