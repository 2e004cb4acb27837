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

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// Event reasons of the snapshot kind's own steps.
const (
	reasonSnapshotting event.Reason = "Snapshotting"
	reasonDescribed    event.Reason = "DescriptionChanged"
	reasonRollingBack  event.Reason = "RollingBack"
	reasonRolledBack   event.Reason = "RolledBack"
	reasonRollbackLost event.Reason = "RollbackNotMade"
	reasonSnapshotGone event.Reason = "SnapshotDeleting"
)

// Create implements managed.TypedExternalClient: it starts PVE's snapshot
// task and returns; Observe follows it.
func (e *external) Create(ctx context.Context, cr *v1alpha1.VirtualMachineSnapshot) (managed.ExternalCreation, error) {
	if underway, err := guest.CheckPreviousCreate(ctx, e.cl, cr); err != nil || underway {
		return managed.ExternalCreation{}, err
	}
	name := meta.GetExternalName(cr)
	upid, err := e.cl.CreateSnapshot(ctx, e.target.ref, name, pve.SnapshotOptions{Description: cr.Spec.Description, VMState: cr.Spec.VMState})
	if pve.IsLocked(err) {
		// The guest is busy (a backup, another snapshot): the next poll
		// tries again, without an error condition.
		return managed.ExternalCreation{}, nil
	}
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	meta.AddAnnotations(cr, map[string]string{guest.AnnotationCreateTask: upid})
	e.record.Event(cr, event.Normal(reasonSnapshotting, "taking snapshot "+name+" of "+e.target.what))
	return managed.ExternalCreation{}, nil
}

// Update implements managed.TypedExternalClient: the description, then a
// rollback asked for with a new token.
func (e *external) Update(ctx context.Context, cr *v1alpha1.VirtualMachineSnapshot) (managed.ExternalUpdate, error) {
	s := e.obs.snap
	if s == nil || e.obs.busy {
		return managed.ExternalUpdate{}, nil
	}
	if s.Description != cr.Spec.Description {
		err := e.cl.SetSnapshotDescription(ctx, e.target.ref, s.Name, cr.Spec.Description)
		if retry, err := guest.RetryIfLocked(err, "the description"); err != nil || retry {
			return managed.ExternalUpdate{}, err
		}
		e.record.Event(cr, event.Normal(reasonDescribed, "description of snapshot "+s.Name+" changed"))
	}
	if token := pendingRollback(cr); token != "" {
		return managed.ExternalUpdate{}, e.rollback(ctx, cr, token)
	}
	return managed.ExternalUpdate{}, nil
}

// Delete implements managed.TypedExternalClient: it deletes the snapshot,
// never the guest.
func (e *external) Delete(ctx context.Context, cr *v1alpha1.VirtualMachineSnapshot) (managed.ExternalDelete, error) {
	s := e.obs.snap
	if s == nil || e.obs.busy {
		return managed.ExternalDelete{}, nil
	}
	upid, err := e.cl.DeleteSnapshot(ctx, e.target.ref, s.Name)
	if retry, err := guest.RetryIfLocked(err, "the deletion"); err != nil || retry {
		return managed.ExternalDelete{}, err
	}
	guest.RecordTask(&cr.Status.LastTask, upid)
	e.record.Event(cr, event.Normal(reasonSnapshotGone, "deleting snapshot "+s.Name+" of "+e.target.what))
	return managed.ExternalDelete{}, nil
}
