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

// NamespaceSelector lists namespaces by name (kubemox's selector). A
// provider may not list Namespaces, so there is no label selector.
type NamespaceSelector struct {
	// Namespaces whose VirtualMachines the policy selects; empty means the
	// policy's own namespace.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=set
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
}

// SnapshotRetention bounds the snapshots a policy keeps per VM. A snapshot
// is kept when either rule keeps it; with neither set every snapshot is
// kept.
type SnapshotRetention struct {
	// KeepLast keeps the newest N snapshots of each VM.
	// +kubebuilder:validation:Minimum=1
	// +optional
	KeepLast *int32 `json:"keepLast,omitempty"`

	// KeepWithin keeps every snapshot younger than this duration (Go
	// syntax: 36h, 90m).
	// +optional
	KeepWithin *metav1.Duration `json:"keepWithin,omitempty"`
}

// SnapshotDeletionPolicy says what happens to the snapshots a policy made
// when the policy is deleted.
// +kubebuilder:validation:Enum=Retain;Delete
type SnapshotDeletionPolicy string

// Snapshot deletion policies.
const (
	// SnapshotDeletionRetain keeps them (the default).
	SnapshotDeletionRetain SnapshotDeletionPolicy = "Retain"
	// SnapshotDeletionDelete deletes the VirtualMachineSnapshots the policy
	// made (and so the Proxmox VE snapshots) before the policy goes.
	SnapshotDeletionDelete SnapshotDeletionPolicy = "Delete"
)

// VirtualMachineSnapshotPolicySpec takes snapshots of the selected
// VirtualMachines on a schedule: kubemox's fields (namespaceSelector,
// labelSelector, snapshotSchedule, connectionRef) plus a time zone,
// retention, suspend and what its deletion does.
type VirtualMachineSnapshotPolicySpec struct {
	// NamespaceSelector lists the namespaces to select VirtualMachines in.
	// +optional
	NamespaceSelector NamespaceSelector `json:"namespaceSelector,omitempty"`

	// LabelSelector selects VirtualMachines by label; empty selects every
	// VirtualMachine of the namespaces.
	// +optional
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`

	// SnapshotSchedule is a cron schedule: five fields (minute hour
	// day-of-month month day-of-week) or a descriptor such as @daily.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	SnapshotSchedule string `json:"snapshotSchedule"`

	// TimeZone the schedule is read in (an IANA name such as Europe/Berlin);
	// UTC when omitted.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone string `json:"timeZone,omitempty"`

	// Retention prunes the oldest snapshots the policy made.
	// +optional
	Retention *SnapshotRetention `json:"retention,omitempty"`

	// ConnectionRef limits the policy to VirtualMachines of this
	// ProxmoxConnection (kubemox's field).
	// +optional
	ConnectionRef *ConnectionReference `json:"connectionRef,omitempty"`

	// Suspend stops taking and pruning snapshots; the ones made are kept.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// SnapshotDeletionPolicy is what deleting the policy does to the
	// snapshots it made: Retain (the default) or Delete.
	// +kubebuilder:default=Retain
	// +optional
	SnapshotDeletionPolicy SnapshotDeletionPolicy `json:"snapshotDeletionPolicy,omitempty"`
}

// VirtualMachineSnapshotPolicyStatus is the observed state of a
// VirtualMachineSnapshotPolicy. The schedule is driven from it, so a
// provider restart neither skips a run nor takes one twice.
type VirtualMachineSnapshotPolicyStatus struct {
	// Conditions: Ready, and one per VirtualMachine whose last snapshot or
	// prune failed (type Snapshot/<namespace>/<name>).
	xpv2.ConditionedStatus `json:",inline"`

	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LastRunTime is the scheduled time of the last run taken.
	// +optional
	LastRunTime *metav1.Time `json:"lastRunTime,omitempty"`

	// NextRunTime is the scheduled time of the next run.
	// +optional
	NextRunTime *metav1.Time `json:"nextRunTime,omitempty"`

	// SnapshotsTaken counts the VirtualMachineSnapshots the policy created.
	// +optional
	SnapshotsTaken int64 `json:"snapshotsTaken,omitempty"`

	// SnapshotsPruned counts the ones it deleted under its retention.
	// +optional
	SnapshotsPruned int64 `json:"snapshotsPruned,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=vmsnappol,categories={crossplane,proxmox}
// +kubebuilder:printcolumn:name="SCHEDULE",type="string",JSONPath=".spec.snapshotSchedule"
// +kubebuilder:printcolumn:name="LAST",type="date",JSONPath=".status.lastRunTime"
// +kubebuilder:printcolumn:name="NEXT",type="string",JSONPath=".status.nextRunTime"
// +kubebuilder:printcolumn:name="SUSPENDED",type="boolean",JSONPath=".spec.suspend"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +crossplane:generate:methods=false

// A VirtualMachineSnapshotPolicy creates VirtualMachineSnapshots of the
// VirtualMachines it selects on a cron schedule and prunes them under its
// retention. It is not a managed resource: it manages Kubernetes objects.
type VirtualMachineSnapshotPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VirtualMachineSnapshotPolicySpec   `json:"spec"`
	Status VirtualMachineSnapshotPolicyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true
// +crossplane:generate:methods=false

// VirtualMachineSnapshotPolicyList contains a list of
// VirtualMachineSnapshotPolicy.
type VirtualMachineSnapshotPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineSnapshotPolicy `json:"items"`
}
