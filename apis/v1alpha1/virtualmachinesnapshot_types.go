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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// AnnotationRollback asks for a rollback of the guest to a snapshot: each new
// value (a token of the user's choosing) rolls back once.
const AnnotationRollback = "proxmox.alperen.cloud/rollback"

// VirtualMachineSnapshotSpec is a snapshot of a guest: kubemox's fields
// (virtualMachineName, snapshotName, timestamp, connectionRef) plus a guest
// named by VMID and node, a description and vmstate.
//
// +kubebuilder:validation:XValidation:rule="[has(self.virtualMachineName), has(self.containerName), has(self.vmid)].filter(x, x).size() == 1",message="exactly one of virtualMachineName, containerName or vmid is required"
// +kubebuilder:validation:XValidation:rule="has(self.containerName) == has(oldSelf.containerName) && (!has(self.containerName) || self.containerName == oldSelf.containerName)",message="containerName is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.vmid) == has(self.nodeName)",message="vmid and nodeName go together: nodeName is required with vmid and used only with it"
// +kubebuilder:validation:XValidation:rule="has(self.virtualMachineName) == has(oldSelf.virtualMachineName) && (!has(self.virtualMachineName) || self.virtualMachineName == oldSelf.virtualMachineName)",message="virtualMachineName is immutable"
// +kubebuilder:validation:XValidation:rule="(has(self.vmid) ? self.vmid : 0) == (has(oldSelf.vmid) ? oldSelf.vmid : 0)",message="vmid is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.nodeName) == has(oldSelf.nodeName) && (!has(self.nodeName) || self.nodeName == oldSelf.nodeName)",message="nodeName is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.snapshotName) == has(oldSelf.snapshotName) && (!has(self.snapshotName) || self.snapshotName == oldSelf.snapshotName)",message="snapshotName is immutable"
// +kubebuilder:validation:XValidation:rule="(has(self.vmstate) && self.vmstate) == (has(oldSelf.vmstate) && oldSelf.vmstate)",message="vmstate is immutable"
type VirtualMachineSnapshotSpec struct {
	// The connection, management policies and connection-detail Secret
	// (vmid, node and snapshotName are written to it). With
	// virtualMachineName the VirtualMachine's connection is used; naming
	// another one is an error.
	ResourceSpec `json:",inline"`

	// VirtualMachineName names the VirtualMachine in this namespace whose
	// guest is snapshotted (kubemox's field).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	VirtualMachineName string `json:"virtualMachineName,omitempty"`

	// ContainerName names the Container in this namespace whose guest is
	// snapshotted, instead of virtualMachineName: container snapshots work
	// the same (vmstate aside: PVE keeps no RAM of a container).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ContainerName string `json:"containerName,omitempty"`

	// VMID of a QEMU guest this provider does not manage (with nodeName and
	// the connection), instead of virtualMachineName.
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=999999999
	// +optional
	VMID *int32 `json:"vmid,omitempty"`

	// NodeName is the node of the guest named by vmid: where it is looked
	// for first (a migrated guest is followed).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// SnapshotName is the snapshot's name in Proxmox VE and the resource's
	// external name: a letter, then letters, digits, '-' or '_', 2 to 40
	// characters, neither current nor pending. Derived from metadata.name
	// when omitted.
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z][a-zA-Z0-9_-]{1,39}$')",message="snapshotName must be 2 to 40 characters: a letter, then letters, digits, '-' or '_' (Proxmox VE's configuration ID)"
	// +kubebuilder:validation:XValidation:rule="!(self.lowerAscii() in ['current', 'pending'])",message="snapshotName must not be current or pending (names Proxmox VE reserves)"
	// +kubebuilder:validation:MaxLength=40
	// +optional
	SnapshotName string `json:"snapshotName,omitempty"`

	// Description of the snapshot; the one field that may change.
	// +kubebuilder:validation:MaxLength=8192
	// +optional
	Description string `json:"description,omitempty"`

	// VMState includes the guest's RAM, so a rollback resumes the running
	// guest. Proxmox VE saves it only while the guest runs.
	// +optional
	VMState bool `json:"vmstate,omitempty"`

	// Timestamp is kubemox's field, accepted so its manifests apply; the
	// provider does not use it (status.snapTime is when Proxmox VE took the
	// snapshot).
	// +optional
	Timestamp *metav1.Time `json:"timestamp,omitempty"`
}

// SnapshotRollback is the last rollback asked for with the rollback
// annotation.
type SnapshotRollback struct {
	// Token is the annotation's value the rollback was made for; the same
	// value again does nothing.
	Token string `json:"token"`

	// RequestedAt is when the provider took the token, before asking
	// Proxmox VE.
	// +optional
	RequestedAt *metav1.Time `json:"requestedAt,omitempty"`

	// Task is the rollback task, followed until it stops.
	// +optional
	Task *TaskStatus `json:"task,omitempty"`
}

// VirtualMachineSnapshotStatus is the observed state of a
// VirtualMachineSnapshot.
type VirtualMachineSnapshotStatus struct {
	// Conditions (Ready, Synced) and the observed generation.
	xpv2.ManagedResourceStatus `json:",inline"`
	PollStatus                 `json:",inline"`

	// Status is kubemox's summary: Created (as kubemox's controller writes
	// it) or Failed.
	// +optional
	Status string `json:"status,omitempty"`

	// ErrorMessage is Proxmox VE's message when the snapshot failed.
	// +optional
	ErrorMessage string `json:"errorMessage,omitempty"`

	// VMID of the guest.
	// +optional
	VMID int32 `json:"vmid,omitempty"`

	// NodeName is the node the guest was on when last observed.
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// Parent is the snapshot this one was taken on top of.
	// +optional
	Parent string `json:"parent,omitempty"`

	// SnapTime is when Proxmox VE took the snapshot.
	// +optional
	SnapTime *metav1.Time `json:"snapTime,omitempty"`

	// VMState reports whether the snapshot holds the guest's RAM.
	// +optional
	VMState bool `json:"vmstate,omitempty"`

	// ConnectionName is the ProxmoxConnection the snapshot was last taken or
	// observed through: the guest's own when the snapshot names a
	// VirtualMachine or Container and no connection of its own.
	// +optional
	ConnectionName string `json:"connectionName,omitempty"`

	// LastTask is the last snapshot task (create, delete) the provider
	// started.
	// +optional
	LastTask *TaskStatus `json:"lastTask,omitempty"`

	// Rollback is the last rollback asked for with the rollback annotation.
	// +optional
	Rollback *SnapshotRollback `json:"rollback,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=vmsnap,categories={crossplane,managed,proxmox}
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="VM",type="string",JSONPath=".spec.virtualMachineName"
// +kubebuilder:printcolumn:name="VMID",type="integer",JSONPath=".status.vmid"
// +kubebuilder:printcolumn:name="PARENT",type="string",JSONPath=".status.parent"
// +kubebuilder:printcolumn:name="ROLLBACK",type="string",JSONPath=".status.rollback.token",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="NEXT-CHECK",type="string",JSONPath=".status.nextCheckTime",priority=1
// +crossplane:generate:methods=false

// A VirtualMachineSnapshot is a Proxmox VE snapshot of a QEMU guest. Its
// external name is the snapshot name. The annotation
// proxmox.alperen.cloud/rollback rolls the guest back to it, once per value.
type VirtualMachineSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VirtualMachineSnapshotSpec   `json:"spec"`
	Status VirtualMachineSnapshotStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true
// +crossplane:generate:methods=false

// VirtualMachineSnapshotList contains a list of VirtualMachineSnapshot.
type VirtualMachineSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineSnapshot `json:"items"`
}
