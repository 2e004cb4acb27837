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
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// Reasons of a ProxmoxConnection's Ready condition. They are part of the API:
// users and alerts match on them.
const (
	// ReasonAvailable: the credential was accepted by Proxmox VE.
	ReasonAvailable xpv2.ConditionReason = "Available"
	// ReasonSecretNotFound: a referenced Secret does not exist.
	ReasonSecretNotFound xpv2.ConditionReason = "SecretNotFound"
	// ReasonSecretKeyNotFound: a referenced Secret lacks the referenced key.
	ReasonSecretKeyNotFound xpv2.ConditionReason = "SecretKeyNotFound"
	// ReasonAuthenticationFailed: Proxmox VE refused the credential.
	ReasonAuthenticationFailed xpv2.ConditionReason = "AuthenticationFailed"
	// ReasonEndpointUnreachable: no answer from the endpoint (DNS, TCP,
	// timeout, or a non-API response).
	ReasonEndpointUnreachable xpv2.ConditionReason = "EndpointUnreachable"
	// ReasonTLSVerificationFailed: the endpoint's certificate did not verify
	// against the trusted CAs.
	ReasonTLSVerificationFailed xpv2.ConditionReason = "TLSVerificationFailed"
	// ReasonInvalidEndpoint: the endpoint could not be parsed into a URL.
	ReasonInvalidEndpoint xpv2.ConditionReason = "InvalidEndpoint"
	// ReasonDegraded: Ready, but some of the connection's endpoints are
	// down and requests go to the others; the message names the down ones.
	ReasonDegraded xpv2.ConditionReason = "Degraded"
)

// TypeMigrated is a guest's condition about its last migration: absent until
// the provider migrates it, then Unknown (Migrating) while one runs, True
// (Migrated) once it arrived, False (MigrationFailed, with PVE's reason) when
// PVE refused or aborted it and the guest stayed where it was.
const TypeMigrated xpv2.ConditionType = "Migrated"

// Reasons of the Migrated condition.
const (
	ReasonMigrating       xpv2.ConditionReason = "Migrating"
	ReasonMigrated        xpv2.ConditionReason = "Migrated"
	ReasonMigrationFailed xpv2.ConditionReason = "MigrationFailed"
)

// Reasons of a VirtualMachineSnapshot's Ready condition.
const (
	// ReasonVirtualMachineGone: the VirtualMachine or its guest no longer
	// exists; Proxmox VE removed the guest's snapshots with it.
	ReasonVirtualMachineGone xpv2.ConditionReason = "VirtualMachineGone"
)

// Condition types and reasons of a VirtualMachineSnapshotPolicy.
const (
	// ConditionTypeSnapshotPrefix starts the type of the condition a policy
	// keeps for each VirtualMachine whose snapshot or prune failed:
	// Snapshot/<namespace>/<name>.
	ConditionTypeSnapshotPrefix = "Snapshot/"
	// ReasonSnapshotFailed: creating or pruning a VM's snapshot failed.
	ReasonSnapshotFailed xpv2.ConditionReason = "SnapshotFailed"
	// ReasonScheduled: the schedule is valid and runs.
	ReasonScheduled xpv2.ConditionReason = "Scheduled"
	// ReasonSuspended: spec.suspend stops the schedule.
	ReasonSuspended xpv2.ConditionReason = "Suspended"
	// ReasonInvalidSchedule: snapshotSchedule or timeZone cannot be parsed.
	ReasonInvalidSchedule xpv2.ConditionReason = "InvalidSchedule"
)
