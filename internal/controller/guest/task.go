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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// What status.lastTask.status says about the last task a controller started.
const (
	TaskRunning = "running"
	TaskStopped = "stopped"
)

// AnnotationCreateTask records the UPID of the clone/create task Create
// started; it is persisted with the create-succeeded annotation.
const AnnotationCreateTask = "proxmox.alperen.cloud/create-task"

// TaskReader reads one PVE task: its status, and its log when the exit
// status of a failure names no cause.
type TaskReader interface {
	TaskStatus(ctx context.Context, upid string) (pve.TaskStatus, error)
	TaskLogReader
}

// TaskLister lists the recent tasks on one guest.
type TaskLister interface {
	GuestTasks(ctx context.Context, node string, vmid, limit int) ([]pve.TaskStatus, error)
}

// RecordTask makes upid the last task (*last), followed by Observe until it
// stops.
func RecordTask(last **v1alpha1.TaskStatus, upid string) {
	if upid == "" {
		return
	}
	t := &v1alpha1.TaskStatus{UPID: upid, Status: TaskRunning}
	if u, err := pve.ParseUPID(upid); err == nil {
		t.Type = u.Type
	}
	*last = t
}

// TaskUnderway reports whether the last task was still running when last
// observed.
func TaskUnderway(last *v1alpha1.TaskStatus) bool {
	return last != nil && last.Status == TaskRunning
}

// TaskUnderwayOfType reports whether the last task is underway and is one of
// types (the reboot, shutdown and stop of a guest type, say).
func TaskUnderwayOfType(last *v1alpha1.TaskStatus, types ...string) bool {
	if !TaskUnderway(last) {
		return false
	}
	for _, t := range types {
		if last.Type == t {
			return true
		}
	}
	return false
}

// TaskFailed reports whether a recorded exit status is a failure; "" is a
// task not seen stopped.
func TaskFailed(exit string) bool {
	return exit != "" && !pve.ExitStatusOK(exit)
}

// TaskFailedMessage is how a condition or event reports a failed task:
// "Proxmox VE task qmcreate failed: <PVE's reason>".
func TaskFailedMessage(last *v1alpha1.TaskStatus) string {
	return "Proxmox VE task " + last.Type + " failed: " + last.ExitStatus
}

// LastTaskFailed reports whether the last task stopped with a failure.
func LastTaskFailed(last *v1alpha1.TaskStatus) bool {
	return last != nil && last.Status == TaskStopped && TaskFailed(last.ExitStatus)
}

// RefreshTask follows the last task (last) while it runs and reports whether
// it still does. A failure is recorded in last and surfaced on obj as a
// Warning event with PVE's whole reason (see failureText; secrets are values
// of the resource's own, such as a cloud-init password, to hide as well); the
// kind shows it on Ready while the task's work is undone.
func RefreshTask(ctx context.Context, cl TaskReader, rec event.Recorder, obj runtime.Object, last *v1alpha1.TaskStatus, secrets ...string) (running bool, err error) {
	if !TaskUnderway(last) {
		return false, nil
	}
	ts, err := cl.TaskStatus(ctx, last.UPID)
	if pve.IsTaskUnknown(err) {
		// A task PVE forgot cannot be running: do not block on it.
		last.Status = TaskStopped
		return false, nil
	}
	if err != nil {
		// No answer about the task: it may still run (a reboot under way).
		return false, errors.Wrap(err, "cannot follow the last Proxmox VE task")
	}
	if ts.Running {
		return true, nil
	}
	last.Status, last.ExitStatus = TaskStopped, ts.ExitStatus
	switch {
	case ts.Failed():
		last.ExitStatus = failureText(ctx, cl, last.UPID, ts.ExitStatus, secrets)
		rec.Event(obj, event.Warning(ReasonTaskFailed, errors.New(TaskFailedMessage(last))))
	case last.Type == pve.QEMU.TaskType("shutdown"):
		reportForcedStop(ctx, cl, rec, obj, last)
	}
	return false, nil
}

// reportForcedStop says with a Warning event when PVE stopped a VM hard at
// the end of a shutdown task (forceStop after a timeout or a failed
// powerdown): the task ends OK then, and only its log says so (see
// pve.ForcedStop). pve-container's forced stop (lxc-stop killing after the
// timeout) logs nothing, so a container's cannot be told.
func reportForcedStop(ctx context.Context, cl TaskLogReader, rec event.Recorder, obj runtime.Object, last *v1alpha1.TaskStatus) {
	log, err := cl.TaskLog(ctx, last.UPID)
	if err != nil {
		return // the log only adds to a task that succeeded: without it there is nothing to say
	}
	if line := pve.ForcedStop(log); line != "" {
		rec.Event(obj, event.Warning(ReasonForcedStop, errors.New(
			"the guest did not shut down gracefully: Proxmox VE stopped it hard (task "+last.Type+" log: "+line+")")))
	}
}

// FollowCreateTask makes the clone or create task that Create started (the
// create-task annotation of o) the last task once the guest is in place, so
// it is followed to its end like the tasks Update starts: its result shows
// in status.lastTask and the client layer measures it. Create cannot record
// it there itself: the reconciler keeps only the annotations Create sets.
func FollowCreateTask(o metav1.Object, last **v1alpha1.TaskStatus) {
	if upid := o.GetAnnotations()[AnnotationCreateTask]; upid != "" && *last == nil {
		RecordTask(last, upid)
	}
}

// ForgetCreateTask drops the recorded create task.
func ForgetCreateTask(o metav1.Object) {
	meta.RemoveAnnotations(o, AnnotationCreateTask)
}

// CheckPreviousCreate looks at the task of the last create attempt, when
// one is recorded and Observe found no guest. While it runs, PVE's worker may
// not have written the new config yet: creating again would race our own
// task, so the create is reported underway. A task that failed for another
// reason than a taken VMID is reported with PVE's message. Otherwise (done,
// unknown, or "already exists") the record is dropped and the create is
// retried at the same VMID: PVE refuses it atomically if a guest exists
// there, and the marker rules decide whose that guest is. A failed
// "already exists" task alone never gives the VMID up: it may be our own
// second request racing our first one, whose answer was lost.
func CheckPreviousCreate(ctx context.Context, cl TaskReader, o metav1.Object, secrets ...string) (underway bool, err error) {
	upid := o.GetAnnotations()[AnnotationCreateTask]
	if upid == "" {
		return false, nil
	}
	ts, err := cl.TaskStatus(ctx, upid)
	switch {
	case err == nil && ts.Running:
		return true, nil
	case err == nil && ts.Failed() && !pve.MessageMeansAlreadyExists(ts.ExitStatus):
		ForgetCreateTask(o)
		return false, errors.New(TaskFailedMessage(&v1alpha1.TaskStatus{Type: ts.Type, ExitStatus: failureText(ctx, cl, upid, ts.ExitStatus, secrets)}))
	}
	ForgetCreateTask(o)
	return false, nil
}

// RetryIfLocked turns PVE's "locked" answer to an action into a quiet retry
// on the next poll (retry, no error); any other error is wrapped with what
// was being applied.
func RetryIfLocked(err error, what string) (retry bool, _ error) {
	if pve.IsLocked(err) {
		return true, nil
	}
	return false, errors.Wrapf(err, "cannot apply %s", what)
}

// RebootSettle is how long after a reboot task ended PVE's own start may
// still be on its way (qmeventd starts it after the reboot's stop).
const RebootSettle = 60 * time.Second

// RebootOrTaskUnderway asks PVE's task list (only when about to start a
// guest that looked stopped in a power state read at powerReadAt) whether
// starting it now could be wrong: a task on the guest runs; a start ended
// since the power state was read (task end times have one-second resolution,
// so one of the same second counts), so the guest may run already; or a
// reboot ended less than RebootSettle ago, after which PVE starts the guest
// itself.
// A later reconcile, reading the power state afresh, starts a guest that is
// still stopped. The reboot tasks looked for are those of ref's guest type
// (qmreboot, vzreboot).
func RebootOrTaskUnderway(ctx context.Context, cl TaskLister, ref pve.GuestRef, powerReadAt time.Time) (bool, error) {
	tasks, err := cl.GuestTasks(ctx, ref.Node, ref.VMID, 10)
	if err != nil {
		return false, err
	}
	for _, t := range tasks {
		switch {
		case t.Running:
			return true, nil
		case t.Type == ref.Type.TaskType("start") && t.EndTime >= powerReadAt.Unix():
			return true, nil
		case t.Type == ref.Type.TaskType("reboot") && time.Since(time.Unix(t.EndTime, 0)) < RebootSettle:
			return true, nil
		}
	}
	return false, nil
}

// FollowLaterCreateTask makes the task of the last create attempt (the
// create-task annotation of o) the last task when it started after the one
// recorded, and reports whether it did. A kind whose Create runs again after
// a failed task needs this rather than FollowCreateTask: the annotation
// outlives the tasks followed since, and only a later one is new. Tasks
// are ordered by their UPIDs' start time, then by their worker's process
// start (clock ticks), which orders tasks of one node within a second.
func FollowLaterCreateTask(o metav1.Object, last **v1alpha1.TaskStatus) bool {
	upid := o.GetAnnotations()[AnnotationCreateTask]
	if upid == "" || (*last != nil && !startedAfter(upid, (*last).UPID)) {
		return false
	}
	RecordTask(last, upid)
	return true
}

// startedAfter reports whether task a started after task b; a UPID that
// does not parse never started after anything.
func startedAfter(a, b string) bool {
	ua, errA := pve.ParseUPID(a)
	ub, errB := pve.ParseUPID(b)
	switch {
	case errA != nil:
		return false
	case errB != nil:
		return true
	case ua.StartTime != ub.StartTime:
		return ua.StartTime > ub.StartTime
	}
	return ua.PStart > ub.PStart
}
