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

package virtualmachine

import (
	"context"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/ha"
	"github.com/kubemox/provider-proxmox/internal/controller/placement"
)

// proxmox is everything the VirtualMachine controller asks of Proxmox VE
// (*pve.Client answers): what the shared guest layer calls (finding and
// claiming the VMID, power, migration, deletion, tasks) and the VM's own
// requests below. A test can hand in a fake where the behaviour under test
// is the controller's; where it is Proxmox's, the tests use the simulator.
type proxmox interface {
	guest.Proxmox
	guest.PowerClient
	guest.Migrator
	guest.ConfigWriter
	placement.Reader
	ha.Client

	SetGuestConfigAsync(ctx context.Context, ref pve.GuestRef, set map[string]string, del []string) (string, error)
	CheckPrerequisites(ctx context.Context, p pve.Prerequisites) error
	CloudInitPending(ctx context.Context, ref pve.GuestRef) ([]string, error)
	AgentOSInfo(ctx context.Context, ref pve.GuestRef) (string, error)
	AgentNetworkInterfaces(ctx context.Context, ref pve.GuestRef) ([]pve.GuestNetwork, error)
}

var _ proxmox = (*pve.Client)(nil)
