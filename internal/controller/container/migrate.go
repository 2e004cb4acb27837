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

package container

import (
	"context"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// noun names a container in the shared guest layer's events and messages.
const noun = "container"

// placement decides and records this container's migrations (spec.nodeName
// against status.requestedNode), as for a VirtualMachine.
func (e *external) placement(cr *v1alpha1.Container) guest.Placement {
	return guest.Placement{Record: e.Record, Object: cr, Status: &cr.Status.GuestPlacement, LastTask: cr.Status.LastTask,
		SpecNode: cr.Spec.NodeName, Policy: cr.Spec.Policy(), Noun: noun, LiveMode: "restart"}
}

// migrate starts the move to spec.nodeName. PVE has no live migration for
// containers: a running one moves with a restart migration (PVE shuts it
// down within shutdownTimeoutSeconds, moves it and starts it on the
// target), a stopped one offline.
func (e *external) migrate(ctx context.Context, cr *v1alpha1.Container, o *observation) error {
	m := pve.Migration{Target: cr.Spec.NodeName, Online: o.Running, TargetStorage: volumeStorage(cr),
		ShutdownTimeoutSeconds: o.want.ShutdownTimeout}
	return e.placement(cr).Migrate(ctx, e.cl, &cr.Status.LastTask, o.Ref, m)
}

// volumeStorage is the storage the spec puts every volume on, where a
// migration moves the local ones; "" (the storage IDs are kept) when the
// spec names none or several.
func volumeStorage(cr *v1alpha1.Container) string {
	t := cr.Spec.Template
	if t == nil || len(t.Disk) == 0 {
		return ""
	}
	st := t.Disk[0].Storage
	for _, d := range t.Disk[1:] {
		if d.Storage != st {
			return ""
		}
	}
	return st
}
