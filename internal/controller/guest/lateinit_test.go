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

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

func TestMayLateInit(t *testing.T) {
	set := []metav1.OwnerReference{{APIVersion: "x/v1", Kind: "VirtualMachineSet", Name: "s", UID: "u", Controller: ptr.To(true)}}
	cases := map[string]struct {
		reason   string
		policies xpv2.ManagementPolicies
		owners   []metav1.OwnerReference
		want     bool
	}{
		"Named":       {reason: "LateInitialize named in the policies allows it.", policies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionLateInitialize}, want: true},
		"All":         {reason: "* keeps the API's promise that a field left out is left alone.", policies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}},
		"ObserveOnly": {reason: "An observe-only import changes nothing, its spec included.", policies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}},
		"Controlled":  {reason: "A set's replica has its spec written by the set.", policies: xpv2.ManagementPolicies{xpv2.ManagementActionLateInitialize}, owners: set},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{OwnerReferences: tc.owners}}
			vm.SetManagementPolicies(tc.policies)
			if got := MayLateInit(vm); got != tc.want {
				t.Errorf("%s\nMayLateInit = %t, want %t", tc.reason, got, tc.want)
			}
		})
	}
}
