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

package guesttest

import (
	"context"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// ConfigWrite is one PUT config a controller sent.
type ConfigWrite struct {
	Ref pve.GuestRef
	Set map[string]string
	Del []string
}

// ConfigWrites records the PUT configs a controller sends to a fake of its
// Proxmox interface, answering each with Err.
type ConfigWrites struct {
	Err    error
	Writes []ConfigWrite
}

// SetGuestConfig records the write and returns Err.
func (c *ConfigWrites) SetGuestConfig(_ context.Context, ref pve.GuestRef, set map[string]string, del []string) error {
	c.Writes = append(c.Writes, ConfigWrite{Ref: ref, Set: set, Del: del})
	return c.Err
}
