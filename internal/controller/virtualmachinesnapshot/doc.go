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

// Package virtualmachinesnapshot reconciles VirtualMachineSnapshot managed
// resources with Proxmox VE snapshots of QEMU guests, through
// crossplane-runtime's managed reconciler.
//
// # Target and identity
//
// The guest is a VirtualMachine of the snapshot's namespace
// (spec.virtualMachineName: its observed VMID and node, and its
// ProxmoxConnection) or a guest this provider does not manage (spec.vmid,
// spec.nodeName and the snapshot's own connection). The external name is the
// snapshot name: spec.snapshotName, else one derived from metadata.name
// (v1alpha1.SnapshotNameFor); the initializer stores it before anything is
// created, so the name never changes under an existing snapshot. A snapshot
// of that name found on the guest is this resource's.
//
// # Create, update, delete
//
// Create starts PVE's qmsnapshot task and records its UPID (the create-task
// annotation, followed in status.lastTask); while it runs nothing is sent
// again. Only the description changes in place (PUT .../config); every other
// field is immutable by admission. Delete starts qmdelsnapshot and never
// touches the guest itself.
//
// # Rollback
//
// The annotation proxmox.alperen.cloud/rollback asks for a rollback; each new
// value rolls the guest back once. The token is written to
// status.rollback with its own status update BEFORE PVE is asked, so a
// conflict or a crash can never roll back twice for one token; a rollback
// interrupted between that write and PVE's answer is found again in the
// guest's task list (a qmrollback started since the token was taken), and
// reported as not made when none is there. PVE is never asked to start the
// guest (it does so itself from a snapshot with RAM): the VirtualMachine's
// own reconcile decides its power state, and its spec still rules its
// configuration.
//
// # The guest moved or gone
//
// A guest no longer on the node we knew is looked up in a fresh
// /cluster/resources and PVE's VMID list: a migrated one is followed to its
// new node (spec.nodeName is only where to look first), one still moving is
// retried. PVE removes a guest's snapshots with the guest. Once this resource saw its
// guest (status.vmid), a missing VirtualMachine or guest is reported on
// Ready (reason VirtualMachineGone) rather than retried; deleting the
// resource then just lets it go.
package virtualmachinesnapshot
