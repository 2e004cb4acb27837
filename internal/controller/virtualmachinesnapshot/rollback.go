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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// notMade is the exit status recorded for a token whose rollback was never
// sent to PVE (the provider stopped between taking it and asking).
const notMade = "not made: the provider stopped before Proxmox VE was asked; set a new token to roll back"

// pendingRollback is the rollback token asked for and not yet taken, or "".
func pendingRollback(cr *v1alpha1.VirtualMachineSnapshot) string {
	token := cr.GetAnnotations()[v1alpha1.AnnotationRollback]
	if token == "" || (cr.Status.Rollback != nil && cr.Status.Rollback.Token == token) {
		return ""
	}
	return token
}

// rollbackUnderway reports whether the last rollback's task was running
// when last observed.
func rollbackUnderway(cr *v1alpha1.VirtualMachineSnapshot) bool {
	rb := cr.Status.Rollback
	return rb != nil && guest.TaskUnderway(rb.Task)
}

// rollback takes token, persisting it in status before PVE is asked, so one
// token never rolls back twice whatever fails afterwards; then it starts the
// rollback. A locked guest keeps the token for the next poll.
func (e *external) rollback(ctx context.Context, cr *v1alpha1.VirtualMachineSnapshot, token string) error {
	// PVE checks the lock inside its task, which would spend the token on
	// a failure: a guest busy now (a backup, say) is tried next poll.
	st, err := e.cl.GuestStatus(ctx, e.target.ref)
	if err != nil || st.Lock != "" {
		return err
	}
	previous := cr.Status.Rollback
	now := metav1.Now()
	cr.Status.Rollback = &v1alpha1.SnapshotRollback{Token: token, RequestedAt: &now}
	if err := e.kube.Status().Update(ctx, cr); err != nil {
		cr.Status.Rollback = previous
		return errors.Wrap(err, "cannot record the rollback token before rolling back")
	}
	name := meta.GetExternalName(cr)
	upid, err := e.cl.RollbackSnapshot(ctx, e.target.ref, name)
	if pve.IsLocked(err) {
		cr.Status.Rollback = previous
		return nil
	}
	if err != nil {
		cr.Status.Rollback.Task = &v1alpha1.TaskStatus{Type: e.target.ref.Type.TaskType("rollback"), Status: guest.TaskStopped, ExitStatus: err.Error()}
		return err
	}
	guest.RecordTask(&cr.Status.Rollback.Task, upid)
	e.record.Event(cr, event.Normal(reasonRollingBack, "rolling "+e.target.what+" back to snapshot "+name+" (token "+token+")"))
	return nil
}

// followRollback follows the rollback task while it runs, and finds the
// task of a token taken without a recorded UPID (the status update after
// PVE's answer was lost) in the guest's task list.
func (e *external) followRollback(ctx context.Context, cr *v1alpha1.VirtualMachineSnapshot) error {
	rb := cr.Status.Rollback
	if rb == nil {
		return nil
	}
	if rb.Task == nil {
		return e.findRollbackTask(ctx, cr, rb)
	}
	if !guest.TaskUnderway(rb.Task) {
		return nil
	}
	running, err := guest.RefreshTask(ctx, e.cl, e.record, cr, rb.Task)
	if err != nil || running {
		return err
	}
	if !guest.TaskFailed(rb.Task.ExitStatus) {
		e.record.Event(cr, event.Normal(reasonRolledBack, e.target.what+" rolled back to snapshot "+meta.GetExternalName(cr)+" (token "+rb.Token+")"))
	}
	return nil
}

// findRollbackTask looks for a rollback of the guest started since the
// token was taken; without one, the rollback was never asked for.
func (e *external) findRollbackTask(ctx context.Context, cr *v1alpha1.VirtualMachineSnapshot, rb *v1alpha1.SnapshotRollback) error {
	tasks, err := e.cl.GuestTasks(ctx, e.target.ref.Node, e.target.ref.VMID, 50)
	if err != nil {
		return err
	}
	var since int64
	if rb.RequestedAt != nil {
		// Task start times have one-second resolution.
		since = rb.RequestedAt.Add(-time.Second).Unix()
	}
	for _, t := range tasks {
		if t.Type == e.target.ref.Type.TaskType("rollback") && t.StartTime >= since {
			guest.RecordTask(&rb.Task, t.UPID)
			return nil
		}
	}
	rb.Task = &v1alpha1.TaskStatus{Type: e.target.ref.Type.TaskType("rollback"), Status: guest.TaskStopped, ExitStatus: notMade}
	e.record.Event(cr, event.Warning(reasonRollbackLost, errors.New("rollback for token "+rb.Token+" "+notMade)))
	return nil
}
