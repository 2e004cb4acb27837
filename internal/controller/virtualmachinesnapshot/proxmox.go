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

package virtualmachinesnapshot

import (
	"context"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// proxmox is everything the VirtualMachineSnapshot controller asks of
// Proxmox VE (*pve.Client answers): the shared guest layer (tasks, the
// guest's status and task list, and guest.Identity, which finds a guest that
// moved to another node) and the snapshot requests below. A test hands in a
// fake where the behaviour under test is the controller's; where it is
// Proxmox's, the tests use the simulator.
type proxmox interface {
	guest.Proxmox

	Snapshots(ctx context.Context, ref pve.GuestRef) ([]pve.Snapshot, error)
	CreateSnapshot(ctx context.Context, ref pve.GuestRef, name string, o pve.SnapshotOptions) (string, error)
	SetSnapshotDescription(ctx context.Context, ref pve.GuestRef, name, description string) error
	DeleteSnapshot(ctx context.Context, ref pve.GuestRef, name string) (string, error)
	RollbackSnapshot(ctx context.Context, ref pve.GuestRef, name string) (string, error)
}

var _ proxmox = (*pve.Client)(nil)
