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

package guestimport

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// An imported container names no source, so an import asking for full
// management gives it every policy the provider can honour without one.
func TestImportedContainer(t *testing.T) {
	cfg := pve.GuestConfig{
		"hostname": {Value: "web-ct", HasValue: true},
		"rootfs":   {Value: "local-lvm:vm-300-disk-0,size=4G", HasValue: true},
	}
	row := pve.Resource{Type: "lxc", VMID: 300, Node: "pve1", Name: "web-ct", Status: "stopped"}
	cases := map[string]struct {
		reason string
		asked  xpv2.ManagementPolicies
		want   xpv2.ManagementPolicies
	}{
		"Observe": {reason: "Observe-only stays Observe-only.",
			asked: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}, want: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}},
		"All": {reason: "Full management leaves out Create (no source) and Delete.",
			asked: xpv2.ManagementPolicies{xpv2.ManagementActionAll}, want: containerManaged},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gi := &v1alpha1.GuestImport{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "imp"}, Spec: v1alpha1.GuestImportSpec{ManagementPolicies: tc.asked}}
			ct := importedContainer(gi, row, cfg)
			if diff := cmp.Diff(tc.want, ct.Spec.ManagementPolicies); diff != "" {
				t.Errorf("%s\npolicies: -want, +got:\n%s", tc.reason, diff)
			}
			if meta.GetExternalName(ct) != "300" || ct.Spec.Name != "web-ct" || ct.Spec.NodeName != "pve1" || ct.Spec.AutoStart() {
				t.Errorf("external name %q, spec %+v", meta.GetExternalName(ct), ct.Spec)
			}
			if tpl := ct.Spec.Template; tpl == nil || tpl.Name != "" || tpl.OSTemplate != "" || tpl.Image != nil || len(tpl.Disk) != 1 {
				t.Errorf("template %+v: want the root filesystem and no source", tpl)
			}
			if ct.Labels[LabelGuestImport] != "imp" || len(ct.OwnerReferences) != 0 {
				t.Errorf("labels %v, owners %v", ct.Labels, ct.OwnerReferences)
			}
		})
	}
}
