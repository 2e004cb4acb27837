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

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// MigrationPolicy says how a change of spec.nodeName moves a guest.
// +kubebuilder:validation:Enum=Live;Offline;Never
type MigrationPolicy string

// Migration policies.
const (
	// MigrationPolicyLive migrates a running VM online (a container with a
	// restart, as PVE has no live migration for containers), a stopped one
	// offline. The default.
	MigrationPolicyLive MigrationPolicy = "Live"
	// MigrationPolicyOffline shuts a running guest down first, migrates it
	// offline, and lets the power rules start it again on the target.
	MigrationPolicyOffline MigrationPolicy = "Offline"
	// MigrationPolicyNever ignores a change of nodeName: the guest stays
	// where it runs.
	MigrationPolicyNever MigrationPolicy = "Never"
)

// GuestMigration is the part of a guest's spec that says how it moves. It is
// embedded inline: the field sits directly under spec.
type GuestMigration struct {
	// MigrationPolicy says what a change of nodeName on an existing guest
	// does: Live (default) migrates it with PVE's migrate (online when
	// running; a running container, which PVE cannot move live, with a
	// restart migration), Offline shuts it down first, Never keeps it where
	// it is. Only
	// a change of the spec moves a guest: where it runs is not compared with
	// nodeName, so HA and moves made outside the provider are followed, never
	// undone.
	// +kubebuilder:default=Live
	// +optional
	MigrationPolicy MigrationPolicy `json:"migrationPolicy,omitempty"`
}

// Policy is the migration policy, Live when unset.
func (m *GuestMigration) Policy() MigrationPolicy {
	if m.MigrationPolicy == "" {
		return MigrationPolicyLive
	}
	return m.MigrationPolicy
}

// Migration results.
const (
	MigrationRunning   = "Running"
	MigrationSucceeded = "Succeeded"
	MigrationFailed    = "Failed"
)

// MigrationStatus is the last migration the provider started for a guest.
type MigrationStatus struct {
	// From and To are the source and target nodes.
	From string `json:"from"`
	To   string `json:"to"`
	// Online: a live migration (a restart migration for a container).
	// +optional
	Online bool `json:"online,omitempty"`
	// UPID of the migration task (qmigrate, vzmigrate, or hamigrate when
	// PVE's HA manager carries the move out).
	// +optional
	UPID string `json:"upid,omitempty"`
	// Result: Running, Succeeded or Failed.
	Result string `json:"result"`
	// Message is PVE's reason when it failed.
	// +optional
	Message string `json:"message,omitempty"`
	// ObservedGeneration is the generation of the spec that asked for this
	// migration. A failed migration is retried only once the spec changes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// StartTime and CompletionTime of the migration.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// GuestPlacement is the part of a guest's status that records where the
// spec last asked it to be, and how the last move went.
type GuestPlacement struct {
	// RequestedNode is the nodeName the provider last acted on. A spec whose
	// nodeName differs from it asks for a migration.
	// +optional
	RequestedNode string `json:"requestedNode,omitempty"`
	// LastMigration is the last migration the provider started.
	// +optional
	LastMigration *MigrationStatus `json:"lastMigration,omitempty"`
	// Placement is the node the provider picked for a guest created with
	// spec.placement and no nodeName, and why.
	// +optional
	Placement *PlacementDecision `json:"placement,omitempty"`
}
