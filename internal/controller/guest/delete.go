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

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// KeptByProtection reports whether a resource being deleted keeps its guest
// (what, e.g. "VM 101") because deletionProtection is set, and says so with
// an event. The guest stays; for the reconciler it is gone, so the resource
// can go.
func KeptByProtection(rec event.Recorder, mg resource.Managed, protected bool, what string) bool {
	if !meta.WasDeleted(mg) || !protected {
		return false
	}
	rec.Event(mg, event.Normal(ReasonDeletionProtection, "deletionProtection is set: "+what+" is kept in Proxmox VE"))
	return true
}

// Deleter deletes a guest one step per reconcile: a graceful shutdown,
// which PVE turns into a stop after ShutdownTimeout; a stop if that shutdown
// ended and the guest still runs; then destroy with purge. The reconciler
// keeps observing until PVE no longer has the VMID.
type Deleter struct {
	Client Proxmox
	Record event.Recorder
	// Noun names the guest in events ("VM").
	Noun string
	// ShutdownTimeout is how long, in seconds, the guest gets to power off.
	ShutdownTimeout int
}

// Step takes the next step of deleting the guest at ref, recording the task
// it starts in *last. A locked guest (or PVE saying so) waits quietly.
func (d Deleter) Step(ctx context.Context, obj runtime.Object, last **v1alpha1.TaskStatus, ref pve.GuestRef) error {
	st, err := d.Client.GuestStatus(ctx, ref)
	if pve.IsGuestNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Lock != "" {
		return nil
	}
	if st.Running() {
		return d.powerOff(ctx, obj, last, ref)
	}
	upid, err := d.Client.DeleteGuest(ctx, ref, true)
	if pve.IsLocked(err) || pve.IsGuestRunning(err) {
		return nil
	}
	if err != nil {
		return err
	}
	RecordTask(last, upid)
	d.Record.Event(obj, event.Normal(ReasonDeleting, "destroying "+d.Noun+" "+ref.String()+" with purge"))
	return nil
}

// powerOff asks the guest to shut down (PVE forces a stop after the
// timeout); if a shutdown already finished and the guest still runs, stops
// it.
func (d Deleter) powerOff(ctx context.Context, obj runtime.Object, last **v1alpha1.TaskStatus, ref pve.GuestRef) error {
	if lt := *last; lt != nil && lt.Type == ref.Type.TaskType("shutdown") && lt.Status == TaskStopped {
		upid, err := d.Client.StopGuest(ctx, ref)
		if err != nil {
			_, err = RetryIfLocked(err, "stop")
			return err
		}
		RecordTask(last, upid)
		d.Record.Event(obj, event.Normal(ReasonStopping, "the "+d.Noun+" did not shut down: stopping it"))
		return nil
	}
	upid, err := d.Client.ShutdownGuest(ctx, ref, d.ShutdownTimeout, true)
	if err != nil {
		_, err = RetryIfLocked(err, "shutdown")
		return err
	}
	RecordTask(last, upid)
	d.Record.Event(obj, event.Normal(ReasonShuttingDown, "shutting the "+d.Noun+" down before deleting it"))
	return nil
}
