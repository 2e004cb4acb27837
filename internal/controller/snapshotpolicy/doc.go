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

// Package snapshotpolicy runs VirtualMachineSnapshotPolicies: a plain
// controller (not a managed resource) that creates VirtualMachineSnapshot
// resources of the VirtualMachines a policy selects on its cron schedule and
// prunes them under its retention. The snapshot controller then does the
// Proxmox VE work.
//
// # The schedule lives in status
//
// status.nextRunTime is the slot the policy waits for and
// status.lastRunTime the slot of the last run taken. Each reconcile (woken
// by RequeueAfter at the next slot, or by a spec change) reads the clock:
//
//   - nextRunTime unset (a new, changed or resumed policy): it becomes the
//     first slot after now; nothing runs.
//   - now before nextRunTime: nothing runs.
//   - otherwise one run is taken, for the latest slot not after now, however
//     many slots passed since nextRunTime (a provider down over several
//     slots takes one run when it starts, not one per missed slot); then
//     lastRunTime is that slot and nextRunTime the first slot after now.
//
// A snapshot's names derive from the policy and its slot, so a run repeated
// because its status write was lost finds its snapshots made (AlreadyExists)
// and makes none twice. Nothing is kept in memory between reconciles: a
// restarted provider continues from status.
//
// # Suspension and deletion
//
// spec.suspend clears nextRunTime and stops runs and pruning; slots skipped
// while suspended are not made up. Deleting a policy keeps the snapshots it
// made (labelled with it) unless snapshotDeletionPolicy is Delete: then a
// finalizer holds the policy until they are deleted. No owner reference is
// used (a snapshot may live in another namespace than its policy).
package snapshotpolicy
