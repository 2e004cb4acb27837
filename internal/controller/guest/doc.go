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

// Package guest is what every kind backed by a Proxmox VE guest shares
// (VirtualMachine now; Container and the template kinds next): following the
// PVE tasks a controller starts and the quiet retry when PVE says the guest
// is locked (task.go); the per-resource poll clock, the listing age it
// allows and the poll-interval hook (pollclock.go); a guest's identity, its
// VMID stored before any create plus the ownership marker in its
// description, with the rules that find, claim and give up a VMID
// (identity.go, marker.go), and adopting a marked guest instead of creating
// one (adopt.go, cluster.go); connecting to a resource's ProxmoxConnection
// (connect.go); deletion protection and shutdown, stop, destroy
// (delete.go); the event reasons, the configured-or-drift-corrected report
// and the connection-detail keys every kind uses (events.go); the Ready
// outline and the policy check (ready.go); status/current read once per
// reconcile (status.go). A kind's
// controller keeps only what is its own: the spec it translates and the
// steps it takes.
package guest
