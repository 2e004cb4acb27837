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

package virtualmachineset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

func TestPCIDevicesOf(t *testing.T) {
	a := v1alpha1.PCIDevice{Type: v1alpha1.PCIDeviceTypeMapped, DeviceID: "gpu-a"}
	b := v1alpha1.PCIDevice{Type: v1alpha1.PCIDeviceTypeMapped, DeviceID: "gpu-b"}
	cases := map[string]struct {
		reason    string
		pci       *v1alpha1.PCIDevicesSpec
		replicas  int32
		i         int
		want      []v1alpha1.PCIDevice
		wantShort bool
	}{
		"None":           {reason: "No devices: none.", replicas: 2, i: 0},
		"Shared":         {reason: "Shared gives every VM all devices.", pci: &v1alpha1.PCIDevicesSpec{Mode: "shared", Devices: []v1alpha1.PCIDevice{a, b}}, replicas: 3, i: 2, want: []v1alpha1.PCIDevice{a, b}},
		"Dedicated":      {reason: "Dedicated gives VM i device i.", pci: &v1alpha1.PCIDevicesSpec{Mode: "dedicated", Devices: []v1alpha1.PCIDevice{a, b}}, replicas: 2, i: 1, want: []v1alpha1.PCIDevice{b}},
		"DedicatedShort": {reason: "A replica beyond the list gets none, and the set says so.", pci: &v1alpha1.PCIDevicesSpec{Mode: "dedicated", Devices: []v1alpha1.PCIDevice{a}}, replicas: 2, i: 1, wantShort: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			set := &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: v1alpha1.VirtualMachineSetSpec{Replicas: tc.replicas, PCIDevices: tc.pci}}
			if diff := cmp.Diff(tc.want, pciDevicesOf(set, tc.i)); diff != "" {
				t.Errorf("%s\npciDevicesOf(): -want, +got:\n%s", tc.reason, diff)
			}
			if short := pciShortage(set) != ""; short != tc.wantShort {
				t.Errorf("%s\npciShortage() = %q, want a shortage: %v", tc.reason, pciShortage(set), tc.wantShort)
			}
		})
	}
}

func TestReplicaIndex(t *testing.T) {
	set := &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	cases := map[string]struct {
		name string
		want int
		ok   bool
	}{
		"First":       {name: "web-0", want: 0, ok: true},
		"Tenth":       {name: "web-10", want: 10, ok: true},
		"LeadingZero": {name: "web-01"},
		"OtherSet":    {name: "webby-1"},
		"NoIndex":     {name: "web-x"},
		"Negative":    {name: "web--1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := replicaIndex(set, tc.name)
			if got != tc.want || ok != tc.ok {
				t.Errorf("replicaIndex(%q) = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// Applying the set to a VM the API server defaulted changes nothing the set
// does not own, and a second application changes nothing at all.
func TestApplyOwnedIsStable(t *testing.T) {
	yes := true
	set := &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns",
		Annotations: map[string]string{v1alpha1.AnnotationReconcileMode: v1alpha1.ReconcileModeWatchOnly}},
		Spec: v1alpha1.VirtualMachineSetSpec{Replicas: 1, NodeName: "pve", EnableAutoStart: &yes,
			Template: v1alpha1.VirtualMachineCloneSpec{Name: "tpl", FullClone: &yes}}}
	vm := desiredVM(set, 0, set.Spec.NodeName)
	vm.Spec.RebootPolicy = v1alpha1.RebootPolicyAlways // defaulted by the API server
	before := vm.DeepCopy()
	applyOwned(vm, set, 0)
	if diff := cmp.Diff(before, vm); diff != "" {
		t.Errorf("a second application changed the VM: -before, +after:\n%s", diff)
	}
	if vm.Labels[LabelSet] != "web" || vm.Annotations[v1alpha1.AnnotationReconcileMode] != v1alpha1.ReconcileModeWatchOnly || vm.Spec.Name != "web-0" {
		t.Errorf("label %v, annotations %v, name %q", vm.Labels, vm.Annotations, vm.Spec.Name)
	}
}
