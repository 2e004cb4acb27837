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

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// Delete implements managed.TypedExternalClient: one step per reconcile
// (graceful shutdown, which PVE turns into a stop after the timeout; a stop
// if that did not work; then destroy with purge). The reconciler keeps
// observing until PVE no longer has the VMID.
func (e *external) Delete(ctx context.Context, cr *v1alpha1.VirtualMachine) (managed.ExternalDelete, error) {
	o := e.obs
	if !o.actionable() {
		return managed.ExternalDelete{}, nil
	}
	st, err := e.cl.GuestStatus(ctx, o.ref)
	if pve.IsGuestNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	if err != nil {
		return managed.ExternalDelete{}, err
	}
	if st.Lock != "" {
		return managed.ExternalDelete{}, nil
	}
	if st.Running() {
		return managed.ExternalDelete{}, e.powerOff(ctx, cr, o)
	}
	upid, err := e.cl.DeleteGuest(ctx, o.ref, true)
	if pve.IsLocked(err) || pve.IsGuestRunning(err) {
		return managed.ExternalDelete{}, nil
	}
	if err != nil {
		return managed.ExternalDelete{}, err
	}
	guest.RecordTask(&cr.Status.LastTask, upid)
	e.record.Event(cr, event.Normal("Deleting", "destroying VM "+o.ref.String()+" with purge"))
	return managed.ExternalDelete{}, nil
}

// powerOff asks the guest to shut down (PVE forces a stop after the
// timeout); if a shutdown already finished and the guest still runs, stops
// it.
func (e *external) powerOff(ctx context.Context, cr *v1alpha1.VirtualMachine, o *observation) error {
	lt := cr.Status.LastTask
	if lt != nil && lt.Type == "qmshutdown" && lt.Status == guest.TaskStopped {
		upid, err := e.cl.StopGuest(ctx, o.ref)
		if err != nil {
			_, err = guest.RetryIfLocked(err, "stop")
			return err
		}
		guest.RecordTask(&cr.Status.LastTask, upid)
		e.record.Event(cr, event.Normal("Stopping", "the VM did not shut down: stopping it"))
		return nil
	}
	upid, err := e.cl.ShutdownGuest(ctx, o.ref, shutdownTimeout, true)
	if err != nil {
		_, err = guest.RetryIfLocked(err, "shutdown")
		return err
	}
	guest.RecordTask(&cr.Status.LastTask, upid)
	e.record.Event(cr, event.Normal("ShuttingDown", "shutting the VM down before deleting it"))
	return nil
}
