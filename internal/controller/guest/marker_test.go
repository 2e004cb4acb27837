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

import "testing"

func TestMarker(t *testing.T) {
	m := Marker{Namespace: "default", Name: "web-1", UID: "0f8e2a3c-1111-2222-3333-444455556666"}
	cases := map[string]struct {
		in   string
		want string
	}{
		"empty":              {in: "", want: m.String()},
		"user notes kept":    {in: "my notes\nline two", want: "my notes\nline two\n" + m.String()},
		"old marker dropped": {in: "notes\ncrossplane: default/web-1 uid=aaaa\n\n", want: "notes\n" + m.String()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := WithMarker(tc.in, m)
			if got != tc.want {
				t.Fatalf("WithMarker = %q, want %q", got, tc.want)
			}
			back, ok := ParseMarker(got)
			if !ok || back != m {
				t.Fatalf("ParseMarker = %+v %v, want %+v", back, ok, m)
			}
		})
	}
	if _, ok := ParseMarker("crossplane: not a marker"); ok {
		t.Error("malformed marker parsed")
	}
}

func TestNeedsMarker(t *testing.T) {
	want := Marker{Namespace: "default", Name: "web-1", UID: "u1", Kind: "VirtualMachine", Cluster: "mgmt-a"}
	noID := want
	noID.Cluster = ""
	cases := []struct {
		reason string
		own    Ownership
		desc   string
		want   Marker
		needs  bool
	}{
		{"the current marker is left alone", Mine, want.String(), want, false},
		{"a marker from before kind and cluster is upgraded", Mine, "crossplane: default/web-1 uid=u1", want, true},
		{"a marker without this cluster's identity is upgraded", Mine, noID.String(), want, true},
		{"a provider without an identity does not strip a marker's cluster", Mine, want.String(), noID, false},
		{"a provider without an identity adds the kind", Mine, "crossplane: default/web-1 uid=u1", noID, true},
		{"an adopted guest gets the new UID", MineNewUID, "crossplane: default/web-1 uid=u0 kind=VirtualMachine cluster=mgmt-a", want, true},
		{"an import now managed is marked", Imported, "", want, true},
		{"another object's guest is never marked", Conflict, "crossplane: default/other uid=u9", want, false},
	}
	for _, tc := range cases {
		if got := NeedsMarker(tc.own, tc.desc, tc.want); got != tc.needs {
			t.Errorf("%s: NeedsMarker = %v, want %v", tc.reason, got, tc.needs)
		}
	}
}
