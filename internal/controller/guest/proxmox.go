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

package guest

import (
	"context"
	"time"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// Proxmox is what the shared guest layer asks of a Proxmox VE client
// (*pve.Client answers), so a test can hand in one that fails where it
// wants without the simulator.
type Proxmox interface {
	TaskReader
	TaskLister
	StatusReader
	pve.VMIDSource
	GuestPending(ctx context.Context, ref pve.GuestRef) (pve.GuestConfig, error)
	CachedClusterResources(ctx context.Context, maxAge time.Duration) ([]pve.Resource, error)
	ClusterResourcesSinceCreates(ctx context.Context, maxAge time.Duration) ([]pve.Resource, error)
	ShutdownGuest(ctx context.Context, ref pve.GuestRef, timeoutSeconds int, forceStop bool) (string, error)
	StopGuest(ctx context.Context, ref pve.GuestRef) (string, error)
	DeleteGuest(ctx context.Context, ref pve.GuestRef, purge bool) (string, error)
	CloneGuest(ctx context.Context, src pve.GuestRef, o pve.CloneOptions) (string, error)
}

var _ Proxmox = (*pve.Client)(nil)

// ConfigWriter is what every guest kind writes to its guest: the creation,
// configuration changes and volume growth.
type ConfigWriter interface {
	CreateGuest(ctx context.Context, ref pve.GuestRef, params map[string]string) (string, error)
	SetGuestConfig(ctx context.Context, ref pve.GuestRef, set map[string]string, del []string) error
	ResizeDisk(ctx context.Context, ref pve.GuestRef, disk, size string) (string, error)
}
