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

// StatusReader reads a guest's status/current.
type StatusReader interface {
	GuestStatus(ctx context.Context, ref pve.GuestRef) (pve.GuestStatus, error)
}

// CurrentStatus is a guest's status/current read at most once per
// reconcile: power decisions in Observe and Update (and a direct read that
// found the guest) share one answer rather than asking PVE again.
type CurrentStatus struct {
	st     *pve.GuestStatus
	readAt time.Time
}

// Remember keeps st, just read in this reconcile (nil: nothing read).
func (c *CurrentStatus) Remember(st *pve.GuestStatus) { c.st, c.readAt = st, time.Now() }

// ReadAt is when the status Get returns was asked for: a task that ended
// since may have changed the power state it shows.
func (c *CurrentStatus) ReadAt() time.Time { return c.readAt }

// Get returns status/current of ref, asking PVE only the first time.
func (c *CurrentStatus) Get(ctx context.Context, cl StatusReader, ref pve.GuestRef) (pve.GuestStatus, error) {
	if c.st != nil {
		return *c.st, nil
	}
	asked := time.Now()
	st, err := cl.GuestStatus(ctx, ref)
	if err != nil {
		return st, err
	}
	c.st, c.readAt = &st, asked
	return st, nil
}
