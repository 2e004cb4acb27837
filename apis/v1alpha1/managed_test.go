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

package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

func TestGetProviderConfigReference(t *testing.T) {
	cases := map[string]struct {
		spec ResourceSpec
		want *xpv2.ProviderConfigReference
	}{
		"ProviderConfigRefWins": {
			spec: ResourceSpec{
				ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: "ProxmoxConnection", Name: "pcr"},
				ConnectionRef:           &ConnectionReference{Name: "conn"},
			},
			want: &xpv2.ProviderConfigReference{Kind: "ProxmoxConnection", Name: "pcr"},
		},
		"ProviderConfigRefAlone": {
			spec: ResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: "ProxmoxConnection", Name: "pcr"}},
			want: &xpv2.ProviderConfigReference{Kind: "ProxmoxConnection", Name: "pcr"},
		},
		"ConnectionRefWhenNoProviderConfigRef": {
			spec: ResourceSpec{ConnectionRef: &ConnectionReference{Name: "conn"}},
			want: &xpv2.ProviderConfigReference{Kind: "ProxmoxConnection", Name: "conn"},
		},
		"DefaultWhenNeither": {
			spec: ResourceSpec{},
			want: &xpv2.ProviderConfigReference{Kind: "ProxmoxConnection", Name: "default"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vm := &VirtualMachine{Spec: VirtualMachineSpec{ResourceSpec: tc.spec}}
			if diff := cmp.Diff(tc.want, vm.GetProviderConfigReference()); diff != "" {
				t.Errorf("GetProviderConfigReference(): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestGetProviderConfigReferenceReturnsACopy(t *testing.T) {
	vm := &VirtualMachine{Spec: VirtualMachineSpec{ResourceSpec: ResourceSpec{
		ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: "ProxmoxConnection", Name: "pcr"},
	}}}
	vm.GetProviderConfigReference().Name = "changed"
	if got := vm.Spec.ProviderConfigReference.Name; got != "pcr" {
		t.Errorf("changing the returned reference changed spec: providerConfigRef.name = %q", got)
	}
}

func TestSetProviderConfigReference(t *testing.T) {
	vm := &VirtualMachine{Spec: VirtualMachineSpec{ResourceSpec: ResourceSpec{ConnectionRef: &ConnectionReference{Name: "conn"}}}}
	vm.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: "ProxmoxConnection", Name: "other"})
	if got := vm.GetProviderConfigReference().Name; got != "other" {
		t.Errorf("after SetProviderConfigReference, GetProviderConfigReference().Name = %q, want other", got)
	}
}

func TestGetManagementPolicies(t *testing.T) {
	all := xpv2.ManagementPolicies{xpv2.ManagementActionAll}
	observe := xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	cases := map[string]struct {
		mode string
		spec xpv2.ManagementPolicies
		want xpv2.ManagementPolicies
	}{
		"NoAnnotation":              {spec: all, want: all},
		"Reconcile":                 {mode: ReconcileModeReconcile, spec: all, want: all},
		"UnknownModeNarrowsNothing": {mode: "Sometimes", spec: all, want: all},
		"WatchOnly":                 {mode: ReconcileModeWatchOnly, spec: all, want: observe},
		"EnsureExists": {
			mode: ReconcileModeEnsureExists, spec: all,
			want: xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionDelete},
		},
		"EnsureExistsKeepsOrphaning": {
			mode: ReconcileModeEnsureExists,
			spec: xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate},
			want: xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate},
		},
		"DisablePauses":          {mode: ReconcileModeDisable, spec: all, want: xpv2.ManagementPolicies{}},
		"WatchOnlyOnObserveOnly": {mode: ReconcileModeWatchOnly, spec: observe, want: observe},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vm := &VirtualMachine{Spec: VirtualMachineSpec{ResourceSpec: ResourceSpec{ManagementPolicies: tc.spec}}}
			if tc.mode != "" {
				vm.SetAnnotations(map[string]string{AnnotationReconcileMode: tc.mode})
			}
			got := vm.GetManagementPolicies()
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("GetManagementPolicies(): -want, +got:\n%s", diff)
			}
			if tc.want != nil && len(tc.want) == 0 && got == nil {
				t.Errorf("GetManagementPolicies() = nil, want an empty (pausing) list")
			}
		})
	}
}

func TestVirtualMachineListGetItems(t *testing.T) {
	l := &VirtualMachineList{Items: []VirtualMachine{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
	}}
	items := l.GetItems()
	if len(items) != 2 || items[0].GetName() != "a" || items[1].GetName() != "b" {
		t.Fatalf("GetItems() = %v, want a and b", items)
	}
	items[0].SetName("changed")
	if l.Items[0].Name != "changed" {
		t.Error("GetItems() returned copies, want pointers into the list")
	}
}
