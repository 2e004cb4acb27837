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

// Package virtualmachineset keeps a VirtualMachineSet's VirtualMachines:
// <set>-0 to <set>-<replicas-1>, owned by the set, with the set's template.
package virtualmachineset

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// LabelSet names the VirtualMachineSet a VirtualMachine belongs to.
const LabelSet = "proxmox.alperen.cloud/vmset"

// vmName is the name of replica i, as kubemox names them.
func vmName(set *v1alpha1.VirtualMachineSet, i int) string {
	return set.Name + "-" + strconv.Itoa(i)
}

// replicaIndex is the index of a VM of the set by its name, or false.
func replicaIndex(set *v1alpha1.VirtualMachineSet, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, set.Name+"-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 || strconv.Itoa(i) != rest {
		return 0, false
	}
	return i, true
}

// selector is the label selector of the set's VMs.
func selector(set *v1alpha1.VirtualMachineSet) string {
	return LabelSet + "=" + set.Name
}

// desiredVM is replica i as the set asks for it, on node. Only the fields the set
// owns are filled; applyOwned copies them onto an existing VM, so what the
// API server defaulted there (rebootPolicy, say) is left alone.
func desiredVM(set *v1alpha1.VirtualMachineSet, i int, node string) *v1alpha1.VirtualMachine {
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: set.Namespace, Name: vmName(set, i)}}
	vm.Spec.NodeName = node
	applyOwned(vm, set, i)
	return vm
}

// applyOwned writes what the set decides about replica i onto vm: its label,
// kubemox's reconcile-mode annotation when the set has one, and the spec
// fields the set carries. The VM's name in Proxmox is the resource's name.
func applyOwned(vm *v1alpha1.VirtualMachine, set *v1alpha1.VirtualMachineSet, i int) {
	if vm.Labels == nil {
		vm.Labels = map[string]string{}
	}
	vm.Labels[LabelSet] = set.Name
	if mode, ok := set.Annotations[v1alpha1.AnnotationReconcileMode]; ok {
		if vm.Annotations == nil {
			vm.Annotations = map[string]string{}
		}
		vm.Annotations[v1alpha1.AnnotationReconcileMode] = mode
	}
	s := &vm.Spec
	s.ConnectionRef = set.Spec.ConnectionRef.DeepCopy()
	s.ManagementPolicies = append(s.ManagementPolicies[:0:0], set.Spec.ManagementPolicies...)
	s.Name = vmName(set, i)
	// With placement, each VM's node was decided when it was created and
	// stays: the set never moves a VM.
	if set.Spec.Placement == nil {
		s.NodeName = set.Spec.NodeName
	}
	tpl := set.Spec.Template.DeepCopy()
	tpl.PCIDevices = append(tpl.PCIDevices, pciDevicesOf(set, i)...)
	s.Template = tpl
	s.AdditionalConfig = set.Spec.AdditionalConfig
	s.DeletionProtection = set.Spec.DeletionProtection
	s.EnableAutoStart = set.Spec.EnableAutoStart
}

// pciDevicesOf are the set's PCI devices replica i gets: all of them when
// shared, the i-th when dedicated (none beyond the list).
func pciDevicesOf(set *v1alpha1.VirtualMachineSet, i int) []v1alpha1.PCIDevice {
	p := set.Spec.PCIDevices
	switch {
	case p == nil:
		return nil
	case p.Mode == v1alpha1.PCIModeShared:
		return append([]v1alpha1.PCIDevice(nil), p.Devices...)
	case i < len(p.Devices):
		return []v1alpha1.PCIDevice{p.Devices[i]}
	default:
		return nil
	}
}

// pciShortage says which replicas get no dedicated device, or "".
func pciShortage(set *v1alpha1.VirtualMachineSet) string {
	p := set.Spec.PCIDevices
	if p == nil || p.Mode != v1alpha1.PCIModeDedicated || int(set.Spec.Replicas) <= len(p.Devices) {
		return ""
	}
	return fmt.Sprintf("%d dedicated PCI devices for %d replicas: %s to %s get none",
		len(p.Devices), set.Spec.Replicas, vmName(set, len(p.Devices)), vmName(set, int(set.Spec.Replicas)-1))
}
