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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
)

func TestDecide(t *testing.T) {
	obj := func(externalName string, pending bool) *metav1.ObjectMeta {
		o := &metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"}
		meta.SetExternalName(o, externalName)
		if pending {
			meta.AddAnnotations(o, map[string]string{meta.AnnotationKeyExternalCreatePending: "2026-01-01T00:00:00Z"})
		}
		return o
	}
	mine := Marker{Namespace: "default", Name: "web", UID: "uid-1"}.String()
	cases := map[string]struct {
		reason      string
		o           *metav1.ObjectMeta
		ownVMID     int
		lock        string
		description string
		want        Ownership
	}{
		"Mine":       {reason: "Our marker with our UID.", o: obj("100", true), description: "notes\n" + mine, want: Mine},
		"Restored":   {reason: "Our namespace/name with another UID: adopted.", o: obj("100", true), description: "crossplane: default/web uid=old", want: MineNewUID},
		"Cloning":    {reason: "A locked clone without a marker yet is ours in progress.", o: obj("100", true), lock: "clone", want: InProgress},
		"Imported":   {reason: "A user-set external name on an unmarked guest is an import.", o: obj("100", false), want: Imported},
		"UserOther":  {reason: "A user-set external name on another resource's guest is a conflict.", o: obj("100", false), description: "crossplane: default/db uid=x", want: Conflict},
		"LostRace":   {reason: "A VMID we picked, held by an unlocked unmarked guest: lost.", o: obj("100", true), want: LostRace},
		"MarkerGone": {reason: "A VMID where we once saw our marker is never given up.", o: obj("100", true), ownVMID: 100, want: Conflict},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Decide(MarkerOf(tc.o), tc.o, tc.ownVMID, 100, tc.lock, tc.description); got != tc.want {
				t.Errorf("%s\nDecide(...): want %v, got %v", tc.reason, tc.want, got)
			}
		})
	}
}

func TestCandidateNodes(t *testing.T) {
	cases := map[string]struct {
		lastSeen, spec string
		want           []string
	}{
		"None":     {},
		"Both":     {lastSeen: "pve2", spec: "pve1", want: []string{"pve2", "pve1"}},
		"Same":     {lastSeen: "pve1", spec: "pve1", want: []string{"pve1"}},
		"SpecOnly": {spec: "pve1", want: []string{"pve1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, CandidateNodes(tc.lastSeen, tc.spec)); diff != "" {
				t.Errorf("CandidateNodes(%q, %q): -want, +got:\n%s", tc.lastSeen, tc.spec, diff)
			}
		})
	}
}
