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

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

func TestAdoptionVerdict(t *testing.T) {
	me := Marker{Namespace: "default", Name: "web", UID: "new", Kind: "VirtualMachine", Cluster: "b"}
	sameCluster := Marker{Namespace: "default", Name: "web", UID: "old", Kind: "VirtualMachine", Cluster: "b"}
	otherCluster := Marker{Namespace: "default", Name: "web", UID: "old", Kind: "VirtualMachine", Cluster: "a"}
	noCluster := Marker{Namespace: "default", Name: "web", UID: "old"}
	cases := map[string]struct {
		reason   string
		me       Marker
		found    Marker
		policy   *v1alpha1.AdoptionPolicy
		override string
		want     Adoption
	}{
		"SameClusterNewUID":     {reason: "An orphaned resource applied again adopts its guest.", me: me, found: sameCluster, want: Adopt},
		"SameUID":               {reason: "Our own UID is ours whatever the cluster says.", me: me, found: Marker{Namespace: "default", Name: "web", UID: "new", Cluster: "a"}, want: Adopt},
		"OtherClusterNoOptIn":   {reason: "Another cluster's guest is not taken without an opt-in.", me: me, found: otherCluster, want: WaitForOptIn},
		"OtherClusterListed":    {reason: "A listed cluster's guest is adopted.", me: me, found: otherCluster, policy: &v1alpha1.AdoptionPolicy{FromClusters: []string{"x", "a"}}, want: Adopt},
		"OtherClusterNotListed": {reason: "An unlisted cluster's guest is not.", me: me, found: otherCluster, policy: &v1alpha1.AdoptionPolicy{FromClusters: []string{"x"}}, want: WaitForOptIn},
		"AnyCluster":            {reason: "anyCluster adopts from every cluster.", me: me, found: otherCluster, policy: &v1alpha1.AdoptionPolicy{AnyCluster: true}, want: Adopt},
		"OldMarkerNoOptIn":      {reason: "A marker naming no cluster cannot prove it is ours.", me: me, found: noCluster, want: WaitForOptIn},
		"OldMarkerUnknownListed": {reason: "\"unknown\" lists markers naming no cluster.", me: me, found: noCluster,
			policy: &v1alpha1.AdoptionPolicy{FromClusters: []string{v1alpha1.UnknownCluster}}, want: Adopt},
		"NoIdentityBothSides": {reason: "Without a cluster identity here, an empty cluster is not proof of the same cluster.",
			me: Marker{Namespace: "default", Name: "web", UID: "new"}, found: noCluster, want: WaitForOptIn},
		"OverrideTrue":       {reason: "The annotation adopts from any cluster.", me: me, found: otherCluster, override: "true", want: Adopt},
		"OverrideFalse":      {reason: "The annotation refuses even this cluster's guest.", me: me, found: sameCluster, policy: &v1alpha1.AdoptionPolicy{AnyCluster: true}, override: "false", want: CreateAnew},
		"OverrideOtherValue": {reason: "Another value is no override.", me: me, found: otherCluster, override: "yes", want: WaitForOptIn},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := AdoptionVerdict(tc.me, tc.found, tc.policy, tc.override); got != tc.want {
				t.Errorf("%s\nAdoptionVerdict(...): want %v, got %v", tc.reason, tc.want, got)
			}
		})
	}
}

func TestMarkerFormats(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   Marker
		ok     bool
	}{
		"Old":         {reason: "A marker from before kinds and clusters still parses.", in: "crossplane: default/web uid=u-1", want: Marker{Namespace: "default", Name: "web", UID: "u-1"}, ok: true},
		"New":         {reason: "The kind and cluster fields parse.", in: "notes\ncrossplane: default/web uid=u-1 kind=VirtualMachine cluster=3f2a-11", want: Marker{Namespace: "default", Name: "web", UID: "u-1", Kind: "VirtualMachine", Cluster: "3f2a-11"}, ok: true},
		"KindOnly":    {reason: "A marker without a cluster identity names the kind.", in: "crossplane: ns/t uid=u kind=VirtualMachineTemplate", want: Marker{Namespace: "ns", Name: "t", UID: "u", Kind: "VirtualMachineTemplate"}, ok: true},
		"ClusterOnly": {reason: "The fields are optional one by one.", in: "crossplane: ns/t uid=u cluster=c", want: Marker{Namespace: "ns", Name: "t", UID: "u", Cluster: "c"}, ok: true},
		"BadKind":     {reason: "A malformed field is no marker.", in: "crossplane: ns/t uid=u kind=9x", ok: false},
		"Swapped":     {reason: "Fields come in the documented order.", in: "crossplane: ns/t uid=u cluster=c kind=K", ok: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := ParseMarker(tc.in)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("%s\nParseMarker(%q) = %+v, %v; want %+v, %v", tc.reason, tc.in, got, ok, tc.want, tc.ok)
			}
			if ok {
				if back, _ := ParseMarker(got.String()); back != got {
					t.Errorf("%s\n%q does not parse back: %+v", tc.reason, got.String(), back)
				}
			}
		})
	}
	a := Marker{Namespace: "ns", Name: "x", UID: "1", Kind: "VirtualMachine"}
	if a.SameObject(Marker{Namespace: "ns", Name: "x", UID: "1", Kind: "VirtualMachineTemplate"}) {
		t.Error("markers of two kinds name the same object")
	}
	if !a.SameObject(Marker{Namespace: "ns", Name: "x", UID: "2"}) {
		t.Error("a marker naming no kind does not match by namespace and name")
	}
}
