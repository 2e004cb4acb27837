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

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// placement decides and records this VM's migrations (spec.nodeName against
// status.requestedNode).
func (e *external) placement(cr *v1alpha1.VirtualMachine) guest.Placement {
	return guest.Placement{Record: e.Record, Object: cr, Status: &cr.Status.GuestPlacement, LastTask: cr.Status.LastTask,
		SpecNode: cr.Spec.NodeName, Policy: cr.Spec.Policy(), Noun: "VM"}
}

// migrate starts the move to spec.nodeName: online when the VM runs (its
// local disks moving along), offline when it is stopped.
func (e *external) migrate(ctx context.Context, cr *v1alpha1.VirtualMachine, o *observation) error {
	m := pve.Migration{Target: cr.Spec.NodeName, Online: o.Running, TargetStorage: diskStorage(cr)}
	return e.placement(cr).Migrate(ctx, e.cl, &cr.Status.LastTask, o.Ref, m)
}

// diskStorage is the storage the spec puts the VM's disks on, where a
// migration moves its local disks ("" keeps their storage IDs).
func diskStorage(cr *v1alpha1.VirtualMachine) string {
	if hw := cr.Spec.Hardware(); hw != nil && len(hw.Disk) > 0 {
		return hw.Disk[0].Storage
	}
	return ""
}
