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
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// VirtualMachineSnapshotPolicy type metadata.
var (
	VirtualMachineSnapshotPolicyKind             = reflect.TypeFor[VirtualMachineSnapshotPolicy]().Name()
	VirtualMachineSnapshotPolicyGroupKind        = schema.GroupKind{Group: Group, Kind: VirtualMachineSnapshotPolicyKind}.String()
	VirtualMachineSnapshotPolicyGroupVersionKind = SchemeGroupVersion.WithKind(VirtualMachineSnapshotPolicyKind)

	VirtualMachineSnapshotPolicyListKind             = reflect.TypeFor[VirtualMachineSnapshotPolicyList]().Name()
	VirtualMachineSnapshotPolicyListGroupVersionKind = SchemeGroupVersion.WithKind(VirtualMachineSnapshotPolicyListKind)
)

// Labels the policy puts on the VirtualMachineSnapshots it makes.
const (
	// LabelSnapshotPolicy is the policy's name.
	LabelSnapshotPolicy = "proxmox.alperen.cloud/snapshot-policy"
	// LabelSnapshotPolicyNamespace is the policy's namespace (a snapshot
	// may live in another).
	LabelSnapshotPolicyNamespace = "proxmox.alperen.cloud/snapshot-policy-namespace"
	// LabelVirtualMachine is the VirtualMachine snapshotted.
	LabelVirtualMachine = "proxmox.alperen.cloud/virtual-machine"
)

func init() {
	SchemeBuilder.Register(&VirtualMachineSnapshotPolicy{}, &VirtualMachineSnapshotPolicyList{})
}
