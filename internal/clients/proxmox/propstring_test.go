package proxmox

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pveProperty is pve-common's parse_property_string (src/PVE/JSONSchema.pm)
// without a schema: the parts split on every comma, whitespace-only parts
// skipped, /^([^=]+)=(.+)$/ a key and its value, a part without "=" the
// default key's value (kept under "", as PropString keeps it), and its
// refusals: a duplicate key, a second default value, a part with "=" that
// is no key=value. Its key and schema checks are the format's, not the
// grammar's, and are left out.
var pveProperty = regexp.MustCompile(`^([^=]+)=(.+)$`)

// Perl's \s (5.18 and later): Go's \s lacks the vertical tab.
var pveBlank = regexp.MustCompile(`^[\t\n\v\f\r ]*$`)

var (
	errPVEDuplicate  = errors.New("duplicate key in comma-separated list property")
	errPVEMissingKey = errors.New("missing key in comma-separated list property")
)

func pveParsePropertyString(data string) (map[string]string, error) {
	res := map[string]string{}
	for _, part := range strings.Split(data, ",") {
		if pveBlank.MatchString(part) {
			continue
		}
		k, v := "", part
		switch m := pveProperty.FindStringSubmatch(part); {
		case m != nil:
			k, v = m[1], m[2]
		case strings.Contains(part, "="):
			return nil, errPVEMissingKey
		}
		if _, dup := res[k]; dup {
			return nil, errPVEDuplicate
		}
		res[k] = v
	}
	return res, nil
}

// asMap is what p holds, as pveParsePropertyString returns it.
func (p PropString) asMap() map[string]string {
	out := make(map[string]string, len(p.keys))
	for _, k := range p.keys {
		out[k] = p.values[k]
	}
	return out
}

func TestParsePropString(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   map[string]string
		render string
	}{
		"NIC": {
			reason: "A QEMU NIC as PVE prints it: every key kept, in order.",
			in:     "virtio=BC:24:11:2A:3B:4C,bridge=vmbr0,firewall=1",
			want:   map[string]string{"virtio": "BC:24:11:2A:3B:4C", "bridge": "vmbr0", "firewall": "1"},
			render: "virtio=BC:24:11:2A:3B:4C,bridge=vmbr0,firewall=1",
		},
		"DefaultKeyFirst": {
			reason: "A bare first part is the default key's value (a disk's volume).",
			in:     "local-lvm:vm-100-disk-0,size=32G",
			want:   map[string]string{"": "local-lvm:vm-100-disk-0", "size": "32G"},
			render: "local-lvm:vm-100-disk-0,size=32G",
		},
		"DefaultKeyAnywhere": {
			reason: "parse_property_string takes a part without '=' as the default key's value wherever it stands.",
			in:     "size=32G,local-lvm:vm-100-disk-0",
			want:   map[string]string{"": "local-lvm:vm-100-disk-0", "size": "32G"},
			render: "size=32G,local-lvm:vm-100-disk-0",
		},
		"NoQuoting": {
			reason: "PVE knows no quoting: a comma between quotes still separates parts.",
			in:     `file="a,b",size=1G`,
			want:   map[string]string{"file": `"a`, "": `b"`, "size": "1G"},
			render: `file="a,b",size=1G`,
		},
		"ValueHoldsEquals": {
			reason: "Only the first '=' separates key and value.",
			in:     "args=-a=b,x=1",
			want:   map[string]string{"args": "-a=b", "x": "1"},
			render: "args=-a=b,x=1",
		},
		"BlankPartsSkipped": {
			reason: "Empty and whitespace-only parts are skipped; other whitespace is kept, as PVE keeps it.",
			in:     ", ,bridge=vmbr0,, x ",
			want:   map[string]string{"bridge": "vmbr0", "": " x "},
			render: "bridge=vmbr0, x ",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := ParsePropString(tc.in)
			if diff := cmp.Diff(tc.want, p.asMap()); diff != "" {
				t.Errorf("\n%s\nParsePropString(%q): -want +got:\n%s", tc.reason, tc.in, diff)
			}
			pve, err := pveParsePropertyString(tc.in)
			if err != nil {
				t.Fatalf("\n%s\nPVE's grammar refuses %q: %v", tc.reason, tc.in, err)
			}
			if diff := cmp.Diff(pve, p.asMap()); diff != "" {
				t.Errorf("\n%s\nParsePropString(%q) differs from PVE's grammar: -pve +client:\n%s", tc.reason, tc.in, diff)
			}
			if diff := cmp.Diff(tc.render, p.String()); diff != "" {
				t.Errorf("\n%s\nString(): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// FuzzParsePropString checks the client against PVE's grammar: a string PVE
// accepts reads as PVE reads it, and what the client renders of it PVE
// reads the same again; any string reads back stably.
func FuzzParsePropString(f *testing.F) {
	for _, s := range []string{
		"virtio=BC:24:11:2A:3B:4C,bridge=vmbr0,firewall=1", "local-lvm:vm-100-disk-0,size=32G",
		"ip=dhcp,ip6=auto", ",,=,==", "a=1,a=2", " x , y=z ", "\x00=\xff", `file="a,b",size=1G`,
		"size=8G,local:vm-1-disk-0", "a,b", "k=", "\v,k=v",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := ParsePropString(s)
		again := ParsePropString(p.String())
		if again.String() != p.String() {
			t.Fatalf("not stable: %q -> %q -> %q", s, p.String(), again.String())
		}
		// A newline never reaches a property string (PVE's config parser
		// splits lines first), and Perl's $ would drop a trailing one.
		pve, err := pveParsePropertyString(s)
		if err != nil || strings.Contains(s, "\n") {
			return
		}
		if diff := cmp.Diff(pve, p.asMap()); diff != "" {
			t.Fatalf("ParsePropString(%q) differs from PVE's grammar: -pve +client:\n%s", s, diff)
		}
		rendered, err := pveParsePropertyString(p.String())
		if err != nil {
			t.Fatalf("PVE's grammar refuses %q, rendered from %q: %v", p.String(), s, err)
		}
		if diff := cmp.Diff(pve, rendered); diff != "" {
			t.Fatalf("rendering %q as %q changes what PVE reads: -before +after:\n%s", s, p.String(), diff)
		}
	})
}
