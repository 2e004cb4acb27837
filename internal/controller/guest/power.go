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
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// PowerClient is what starting and rebooting a guest asks of PVE.
type PowerClient interface {
	StatusReader
	TaskLister
	StartGuest(ctx context.Context, ref pve.GuestRef) (string, error)
	RebootGuest(ctx context.Context, ref pve.GuestRef, timeoutSeconds int) (string, error)
	ShutdownGuest(ctx context.Context, ref pve.GuestRef, timeoutSeconds int, forceStop bool) (string, error)
	StopGuest(ctx context.Context, ref pve.GuestRef) (string, error)
}

// PowerWant is the power state a spec asks for: Running, a stopped guest is
// started; Stopped, a running guest is shut down; neither, nothing is done
// about the power state.
type PowerWant struct {
	Running, Stopped bool
}

// PowerState reads whether the guest runs: from the listing row when what
// it says asks for no power action, else from status/current (a new guest
// lists as "unknown", and the listing may predate our own start or
// shutdown).
func PowerState(ctx context.Context, cl StatusReader, current *CurrentStatus, ref pve.GuestRef, row *pve.Resource, want PowerWant) (bool, error) {
	if row != nil && listingSuffices(row.Status, want) {
		return row.Status == "running", nil
	}
	st, err := current.Get(ctx, cl, ref)
	if err != nil {
		return false, err
	}
	return st.Running(), nil
}

// listingSuffices reports whether a guest's lagging listing status can be
// acted on as it is: only when it asks for no power action.
func listingSuffices(status string, want PowerWant) bool {
	switch status {
	case "running":
		return !want.Stopped
	case "stopped":
		return !want.Running
	default:
		return false
	}
}

// PowerTasks are the tasks of guest type t after which the power state is
// still settling.
func PowerTasks(t pve.GuestType) []string {
	return []string{t.TaskType("reboot"), t.TaskType("shutdown"), t.TaskType("stop")}
}

// FillStatus writes kubemox's view of the guest (st) from what Observe saw:
// its place, whether it runs, and the listing row (nil when a direct read
// found it).
func FillStatus(st *v1alpha1.QEMUStatus, ref pve.GuestRef, running bool, row *pve.Resource) {
	st.ID = int32(ref.VMID) //nolint:gosec // bounded by VMIDOf
	st.Node = ref.Node
	st.State = "stopped"
	if running {
		st.State = "running"
	}
	// running is at least as fresh as the lagging listing, so the listing
	// only adds states that running/stopped cannot express.
	if row != nil && !isPlainPowerState(row.Status) {
		st.State = row.Status
	}
	st.Uptime = ""
	if running && row != nil && row.Uptime > 0 {
		st.Uptime = (time.Duration(row.Uptime) * time.Second).String()
	}
}

func isPlainPowerState(s string) bool {
	return s == "" || s == "unknown" || s == "running" || s == "stopped"
}

// MergeKeys returns the keys of a then those of b not in a.
func MergeKeys(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range append(append([]string(nil), a...), b...) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// PowerNeeds is what Observe found the guest's power state needs: a start,
// a shutdown, or a reboot for pending changes.
type PowerNeeds struct {
	Start, Stop, Reboot bool
}

// Power starts a guest that should run, shuts down one that should be
// stopped, or reboots one to apply the changes PVE holds pending.
type Power struct {
	Client PowerClient
	Record event.Recorder
	// Noun names the guest in events ("VM").
	Noun string
	// RebootTimeout bounds the guest's shutdown inside a reboot, in seconds.
	RebootTimeout int
	// ShutdownTimeout is how long, in seconds, a guest being stopped gets
	// to shut down gracefully before it is stopped hard.
	ShutdownTimeout int
}

// Apply does what need asks of the guest at ref (pending lists what a
// reboot applies), checking status/current (which does not lag) first, and
// records the task in *last. It never starts a guest while a task on it
// runs or PVE's own start may be on its way. It reports whether it booted
// the guest.
func (p Power) Apply(ctx context.Context, obj runtime.Object, last **v1alpha1.TaskStatus, current *CurrentStatus, ref pve.GuestRef, need PowerNeeds, pending []string) (bool, error) {
	if !need.Start && !need.Stop && !need.Reboot {
		return false, nil
	}
	st, err := current.Get(ctx, p.Client, ref)
	if err != nil || st.Lock != "" {
		return false, err
	}
	switch {
	case need.Start && !st.Running():
		if busy, err := RebootOrTaskUnderway(ctx, p.Client, ref, current.ReadAt()); err != nil || busy {
			return false, err
		}
		upid, err := p.Client.StartGuest(ctx, ref)
		if err != nil {
			_, err = RetryIfLocked(err, "start")
			return false, err
		}
		RecordTask(last, upid)
		p.Record.Event(obj, event.Normal(ReasonStarted, "starting "+p.Noun))
		return true, nil
	case need.Stop && st.Running():
		return false, p.stop(ctx, obj, last, ref)
	case need.Reboot && st.Running():
		upid, err := p.Client.RebootGuest(ctx, ref, p.RebootTimeout)
		if err != nil {
			_, err = RetryIfLocked(err, "reboot")
			return false, err
		}
		RecordTask(last, upid)
		p.Record.Event(obj, event.Normal(ReasonRebooted, "rebooting to apply pending changes: "+strings.Join(pending, ", ")))
		return true, nil
	}
	return false, nil
}

// stop shuts a guest down gracefully, giving it ShutdownTimeout; when our
// graceful shutdown failed (the timeout ran out, or the agent did not
// answer), it stops the guest hard and says so.
func (p Power) stop(ctx context.Context, obj runtime.Object, last **v1alpha1.TaskStatus, ref pve.GuestRef) error {
	if lt := *last; lt != nil && lt.Type == ref.Type.TaskType("shutdown") && LastTaskFailed(lt) {
		upid, err := p.Client.StopGuest(ctx, ref)
		if err != nil {
			_, err = RetryIfLocked(err, "stop")
			return err
		}
		RecordTask(last, upid)
		p.Record.Event(obj, event.Warning(ReasonStopping, errors.Errorf(
			"the %s did not shut down gracefully within %d s (%s): stopping it (powerState is Stopped)", p.Noun, p.ShutdownTimeout, lt.ExitStatus)))
		return nil
	}
	upid, err := p.Client.ShutdownGuest(ctx, ref, p.ShutdownTimeout, false)
	if err != nil {
		_, err = RetryIfLocked(err, "shutdown")
		return err
	}
	RecordTask(last, upid)
	p.Record.Event(obj, event.Normal(ReasonShuttingDown, fmt.Sprintf(
		"shutting the %s down, %d s to do so gracefully (powerState is Stopped)", p.Noun, p.ShutdownTimeout)))
	return nil
}
