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

// Package virtualmachine reconciles VirtualMachine managed resources with
// QEMU guests in Proxmox VE, through crossplane-runtime's managed reconciler.
//
// What every guest kind shares lives in internal/controller/guest: task
// following (task.go), the VMID identity and marker (identity.go,
// marker.go), the poll clock (pollclock.go), Connect, deletion, events and
// the Ready outline. This package keeps what is the VM's own: translating
// the spec (desired.go, then the client's VMSpec and Diff), cloning or
// creating (create.go), the update steps (update.go) and what Observe reads
// of a QEMU guest (observe.go). The rules below hold for every guest kind.
//
// # Identity
//
// The external name (annotation crossplane.io/external-name) is the guest's
// VMID. PVE has no guest UUID and reuses VMIDs, so every guest we create also
// carries a marker as the last line of its description (user notes above it
// are kept):
//
//	crossplane: <namespace>/<name> uid=<metadata.uid> kind=<Kind> cluster=<id>
//
// kind= and cluster= came later and are optional: a marker without them
// still parses and names no kind and no cluster. The cluster identity is the
// provider's --cluster-id, else the UID of the kube-system namespace, else
// none (Crossplane's default provider RBAC does not grant reading
// namespaces). The format is part of the API (docs/kinds/virtualmachine.md, Identity).
//
// The node is never part of the identity: it is looked up from the VMID on
// every poll (the per-connection /cluster/resources memo), so a migrated
// guest is followed, not recreated.
//
// # Creating without ever making two guests
//
// crossplane-runtime persists annotations set in Create only after Create
// returns, and its default initializer would write metadata.name as the
// external name. So:
//
//   - The default initializer is replaced by none: an empty external name
//     means "no VMID picked yet".
//   - Create picks a VMID (PVE's /cluster/nextid, skipping the VMIDs this
//     process already handed out on that connection, since nextid reserves
//     nothing) and stores it as the external name with its own Kubernetes
//     update BEFORE any PVE call. If that update fails (e.g. a conflict)
//     nothing was sent to PVE. Only then does it clone or create with
//     newid/vmid = that VMID and the marker in the description. The task's
//     UPID is returned as an annotation (persisted with create-succeeded).
//   - managed.WithDeterministicExternalName(true): once the VMID is stored,
//     Observe can always tell what happened, so an interrupted create
//     (create-pending newer than succeeded/failed) never stalls the resource.
//   - managed.WithCreationGracePeriod(0): Observe confirms absence itself
//     (below), so a lost VMID race is retried at once.
//
// Whatever instant the provider is killed at, the stored VMID decides:
// before the update, nothing exists and nothing is recorded; after it, the
// guest at that VMID either does not exist (Create runs again with the same
// VMID; PVE rejects a second guest at one VMID atomically) or exists and is
// judged by the rules below. No path creates a guest at a VMID that is not
// stored on the resource first.
//
// PVE's clone answers with a UPID before its worker writes the new config,
// so for a moment our guest is in no listing. Create therefore never sends a
// second request while the recorded create task runs, and a create refused
// because a guest now exists at a VMID the resource already held does not
// give the VMID up: that guest may be ours (an earlier request whose answer
// was lost). Only Observe's marker rules below drop a VMID, and a failed
// "already exists" task alone never does.
//
// # What Observe decides
//
// With the VMID from the external name, the guest is looked up in the
// connection's /cluster/resources memo. A VMID missing from that lagging
// listing is confirmed with direct reads (status/current on the expected
// node, then PVE's cluster-wide VMID list via /cluster/nextid?vmid=N) before
// the guest is reported absent. For a guest that exists:
//
//   - locked create/clone and no marker yet: ours, in progress (PVE writes the
//     config, locked, before the task fills it) → exists, not Ready.
//   - marker names this resource (namespace/name and UID): ours.
//   - marker names this namespace/name with another UID: ours after a
//     backup/restore of the Kubernetes object or a move between clusters;
//     adopted, and Update rewrites the UID (reported not up to date).
//   - otherwise (no marker, or another resource's): not ours. If the external
//     name was set by a user (it exists and no create-pending annotation was
//     ever written, the import case), the guest is adopted and nothing is
//     changed while the policies are Observe-only; once they allow updates it
//     is reported not up to date until Update writes our marker. If we picked
//     the VMID (create-pending present) and the guest is unlocked without
//     our marker, we lost a race to someone else (the verdict is confirmed
//     with status/current, which always carries the lock): the VMID is dropped
//     from the resource with an explicit update and Observe reports absent,
//     so Create picks again. A resource that once saw its own marker on that
//     VMID (status.vmid equals it) never drops it: a vanished marker is
//     reported as an error rather than risking a second guest.
//
// # Adopting instead of creating
//
// A resource without an external name looks, before it creates, for a guest
// of its type whose marker names its kind (when the marker names one),
// namespace and name: candidates are the guests named as the resource names
// its guest, from the connection's one /cluster/resources view, and only
// their configuration is read (guest/adopt.go). One found is adopted when
// its marker names this management cluster (an orphaned resource applied
// again), or its UID, or the connection's spec.adoption lists its cluster
// (anyCluster: any), or the resource's proxmox.alperen.cloud/adopt is
// "true": the VMID is stored as the external name (its own update), the
// adoption recorded in status.adoption and an Adopted event, and Observe
// goes on as for MineNewUID, so Update writes the new marker in one config
// write. Otherwise the resource creates nothing: Ready=False with reason
// AdoptionRequired names the guest and how to adopt it. "false" never
// adopts. Several marked guests: nothing is created until the user sets the
// external name. MineNewUID on a marker of another named cluster is held to
// the same opt-in, so two live clusters never take a guest from each other.
//
// # Async
//
// Create, Delete and power/resize actions start PVE tasks and return; nothing
// waits on a task. Observe reports a locked guest or a running task of ours
// (status.lastTask) as existing but not Ready, surfaces a failed task as a
// Warning event with PVE's message, and resources that are not Ready are
// polled again within seconds (WithPollIntervalHook). A lost UPID (provider
// killed after PVE answered) does not matter: PVE's lock and the guest's
// presence carry the same information.
//
// # Drift and updates
//
// Only what the spec sets is compared, against GET /pending (current and
// pending values in one request): cores, sockets, memory, NICs keyed by netN
// (model and bridge; the MAC and other options are kept), disks keyed by
// device (grow by resize; shrink or storage change refused with a condition),
// PCI devices, cloud-init keys, additionalConfig keys, name and power. The
// translation between the spec and PVE keys lives in the client package
// (VMSpec, Diff). Update makes one step per reconcile: configuration first,
// then new disks, then one resize; the first start (and any reboot) only once
// nothing else is left to change.
//
// cipassword always reads back masked: an inline password is re-applied when
// the generation changes, a passwordFrom password when the Secret's
// resourceVersion changes; the version applied is recorded in
// status.cloudInitPasswordApplied, never the password.
//
// Changes PVE keeps pending (and cloud-init changes made on a running guest,
// which only PVE's /cloudinit shows) are applied by one reboot unless
// rebootPolicy is Never; status.pendingChanges lists them either way, and
// while a reboot we may make is due the resource is observed within
// seconds. PVE
// reboots as a stop followed by its own start task; before starting a
// stopped guest, the node's task list is checked so the provider never starts
// a guest while a task runs on it or PVE's own start after a reboot is due.
// Power decisions use status/current, not the lagging listing.
//
// Drift corrected after the first Ready emits a Warning (DriftCorrected)
// naming the fields; before it, changes are Normal (Configured). A failed
// task shows on Ready with PVE's message while its work is still undone.
//
// # Cost
//
// In steady state one VM costs one GET /pending per poll plus its share of one
// /cluster/resources read per connection: the client memoises the listing,
// and a Ready VM with nothing under way accepts a listing as old as its own
// observation cycle (the poll interval, or longer when the global reconcile
// rate stretches it; at most five poll intervals), while VMs with work under
// way accept two seconds. The guest agent is asked only while the IP is
// unknown (at most every 30 s per VM) or after a start or reboot.
//
// # Deletion
//
// With deletionProtection the guest stays and Observe reports it gone for a
// resource being deleted. Otherwise: graceful shutdown with a timeout (PVE
// forces a stop after it), then destroy with purge; the resource goes once
// PVE no longer has the VMID.
package virtualmachine
