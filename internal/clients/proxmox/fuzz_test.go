package proxmox

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/luthermonson/go-proxmox"
)

// Fuzz targets for the parsers of what PVE and users send. `go test` runs
// their seed corpora (and testdata/fuzz, where a crasher found by
// `make fuzz` is kept); `make fuzz` explores each for a while.

func FuzzParseUPID(f *testing.F) {
	for _, s := range []string{
		"UPID:pve1:0000A1B2:0001C3D4:65000000:qmstart:101:root@pam:",
		"UPID:pve:00001234:001234567:65000000:qmclone:9000:root@pam!kubemox:",
		"UPID:odd", "UPID::0:0:0:t:i:u:", "UPID:n:x:ffffffffffffffffff:0:t::u:", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := ParseUPID(raw)
		if err != nil {
			return
		}
		if u.Raw != raw || u.Node == "" || !strings.HasPrefix(raw, "UPID:"+u.Node+":") {
			t.Fatalf("ParseUPID(%q) = %+v", raw, u)
		}
	})
}

func FuzzSizeBytes(f *testing.F) {
	for _, s := range []string{"32G", "512M", "1T", "10240K", "1024", "1.5G", "-1G", "1e400", "1e19G", "NaN", "Inf", "G", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, ok := sizeBytes(s); ok && n < 0 {
			t.Fatalf("sizeBytes(%q) = %d: a size is never negative", s, n)
		}
	})
}

func FuzzWholeNumber(f *testing.F) {
	for _, s := range []string{"101", "101.0", "101.5", "", "-3", "1e3", "1e30", "NaN", "0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := wholeNumber(s)
		if err != nil || s == "" {
			return
		}
		if f, perr := strconv.ParseFloat(s, 64); perr != nil || f != float64(n) {
			t.Fatalf("wholeNumber(%q) = %d, but the text reads %v (%v)", s, n, f, perr)
		}
	})
}

func FuzzScrub(f *testing.F) {
	f.Add("cipassword=hunter2 in the log", "hunter2")
	f.Add("token PVEAPIToken=root@pam!x=abc-123", "abc-123")
	f.Add("nothing secret", "")
	f.Fuzz(func(t *testing.T, text, secret string) {
		out := Scrub(text, secret)
		// A secret that is part of the placeholder itself cannot be told apart.
		const placeholder = "[redacted]"
		if secret != "" && !strings.Contains(placeholder, secret) && strings.Contains(out, secret) {
			t.Fatalf("Scrub(%q, %q) = %q: the secret remains", text, secret, out)
		}
	})
}

func FuzzExplainPermission(f *testing.F) {
	f.Add("Permission check failed (/vms/100, VM.Allocate)")
	f.Add("Permission check failed (/storage/local-lvm, Datastore.AllocateSpace|Datastore.Allocate)")
	f.Add("Permission check failed (, )")
	f.Fuzz(func(t *testing.T, msg string) {
		cause := &proxmox.APIError{StatusCode: 403, Status: "403 " + msg, Message: msg}
		err := ExplainPermission(cause)
		if !errors.Is(err, cause) {
			t.Fatalf("ExplainPermission lost its cause for %q", msg)
		}
		if err.Error() != cause.Error() && !strings.HasPrefix(err.Error(), "missing Proxmox VE privilege ") {
			t.Fatalf("ExplainPermission(%q) = %q", msg, err)
		}
	})
}
