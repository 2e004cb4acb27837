/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package guest

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets for what the guest layer reads from users and PVE: the
// ownership marker in a description, external names, and bounded messages.

func FuzzParseMarker(f *testing.F) {
	for _, s := range []string{
		"crossplane: default/web uid=1234", "crossplane: default/web uid=1234 kind=VirtualMachine cluster=0b1c-22", "crossplane: d/w uid=1 cluster=c", "notes\ncrossplane: ns/a.b uid=x\r\n", "crossplane: /x uid=", "\n\n", "crossplane: a/b uid=1\ncrossplane: c/d uid=2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, description string) {
		m, ok := ParseMarker(description)
		if !ok {
			return
		}
		with := WithMarker(description, m)
		again, ok := ParseMarker(with)
		if !ok || again != m {
			t.Fatalf("marker %+v of %q does not survive WithMarker: %q -> %+v", m, description, with, again)
		}
	})
}

func FuzzVMIDOf(f *testing.F) {
	for _, s := range []string{"100", "99", "999999999", "1000000000", "+100", "0100", " 100", "1e3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		id, ok := VMIDOf(name)
		if !ok {
			return
		}
		if id < 100 || id > 999999999 {
			t.Fatalf("VMIDOf(%q) = %d, outside PVE's range", name, id)
		}
		if n, err := strconv.Atoi(name); err != nil || n != id {
			t.Fatalf("VMIDOf(%q) = %d", name, id)
		}
	})
}

func FuzzBounded(f *testing.F) {
	f.Add(strings.Repeat("é", 600), 512)
	f.Add("short", 512)
	f.Add("\xff\xfe", 13)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit < len(" [truncated]")+4 || limit > 1<<16 {
			return
		}
		out := Bounded(text, limit)
		if len(out) > limit {
			t.Fatalf("Bounded(%q, %d) = %d bytes", text, limit, len(out))
		}
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("Bounded(%q, %d) = %q: cut inside a rune", text, limit, out)
		}
	})
}
