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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

func TestRecordTask(t *testing.T) {
	cases := map[string]struct {
		reason string
		upid   string
		want   *v1alpha1.TaskStatus
	}{
		"Parsed": {
			reason: "A UPID's task type is recorded with the task, running.",
			upid:   "UPID:pve1:0000A1B2:0001C3D4:65000000:qmstart:101:root@pam:",
			want:   &v1alpha1.TaskStatus{UPID: "UPID:pve1:0000A1B2:0001C3D4:65000000:qmstart:101:root@pam:", Type: "qmstart", Status: TaskRunning},
		},
		"Unparsable": {
			reason: "A UPID PVE formats differently is still followed, without a type.",
			upid:   "UPID:odd",
			want:   &v1alpha1.TaskStatus{UPID: "UPID:odd", Status: TaskRunning},
		},
		"Empty": {
			reason: "No UPID (a synchronous action) leaves the last task as it was.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var last *v1alpha1.TaskStatus
			RecordTask(&last, tc.upid)
			if diff := cmp.Diff(tc.want, last); diff != "" {
				t.Errorf("%s\nRecordTask(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestTaskState(t *testing.T) {
	cases := map[string]struct {
		reason       string
		last         *v1alpha1.TaskStatus
		underway     bool
		rebootActive bool
		failed       bool
	}{
		"None": {
			reason: "No task recorded: nothing under way, nothing failed.",
		},
		"RebootRunning": {
			reason:       "A running reboot is under way and of the reboot type.",
			last:         &v1alpha1.TaskStatus{Type: "qmreboot", Status: TaskRunning},
			underway:     true,
			rebootActive: true,
		},
		"StartRunning": {
			reason:   "A running start is under way but not a reboot.",
			last:     &v1alpha1.TaskStatus{Type: "qmstart", Status: TaskRunning},
			underway: true,
		},
		"StoppedOK": {
			reason: "A task that stopped with OK is neither under way nor failed.",
			last:   &v1alpha1.TaskStatus{Type: "qmreboot", Status: TaskStopped, ExitStatus: "OK"},
		},
		"StoppedFailed": {
			reason: "A task that stopped with PVE's message failed.",
			last:   &v1alpha1.TaskStatus{Type: "qmstart", Status: TaskStopped, ExitStatus: "start failed: no such bridge"},
			failed: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := []bool{TaskUnderway(tc.last), TaskUnderwayOfType(tc.last, "qmreboot", "qmshutdown"), LastTaskFailed(tc.last)}
			if diff := cmp.Diff([]bool{tc.underway, tc.rebootActive, tc.failed}, got); diff != "" {
				t.Errorf("%s\n[underway, reboot underway, failed]: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// taskList is PVE's task list of one guest.
type taskList []pve.TaskStatus

func (l taskList) GuestTasks(context.Context, string, int, int) ([]pve.TaskStatus, error) {
	return l, nil
}

func TestRebootOrTaskUnderway(t *testing.T) {
	read := time.Now().Add(-2 * time.Second).Truncate(time.Second)
	ended := func(typ string, at time.Time) pve.TaskStatus {
		return pve.TaskStatus{Type: typ, EndTime: at.Unix(), ExitStatus: "OK"}
	}
	qemu := pve.GuestRef{Node: "pve", VMID: 100, Type: pve.QEMU}
	cases := map[string]struct {
		reason string
		tasks  taskList
		want   bool
	}{
		"Nothing": {
			reason: "No task at all: start the stopped guest.",
			want:   false,
		},
		"TaskRunning": {
			reason: "A running task may change the power state: wait.",
			tasks:  taskList{{Type: "qmconfig", Running: true}},
			want:   true,
		},
		"StartEndedAfterTheRead": {
			reason: "Our start ended after the power state was read: the guest may run already.",
			tasks:  taskList{ended("qmstart", read.Add(time.Second))},
			want:   true,
		},
		"StartEndedTheSameSecond": {
			reason: "End times have one-second resolution: a start of the read's second may have ended after it.",
			tasks:  taskList{ended("qmstart", read)},
			want:   true,
		},
		"StartEndedBeforeTheRead": {
			reason: "A start that ended before the read is in the power state read: a stopped guest was stopped since.",
			tasks:  taskList{ended("qmstart", read.Add(-time.Minute*5))},
			want:   false,
		},
		"OtherTaskEndedAfterTheRead": {
			reason: "A configuration task does not start the guest.",
			tasks:  taskList{ended("qmconfig", read.Add(time.Second))},
			want:   false,
		},
		"RecentReboot": {
			reason: "PVE starts the guest itself after a reboot.",
			tasks:  taskList{ended("qmreboot", read.Add(-10*time.Second))},
			want:   true,
		},
		"SettledReboot": {
			reason: "A guest still stopped long after a reboot is started.",
			tasks:  taskList{ended("qmreboot", read.Add(-2*RebootSettle))},
			want:   false,
		},
		"ContainerRebootIsNotQEMUs": {
			reason: "Only the guest type's own reboot task counts.",
			tasks:  taskList{ended("vzreboot", read.Add(-10*time.Second))},
			want:   false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := RebootOrTaskUnderway(context.Background(), tc.tasks, qemu, read)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("%s\nRebootOrTaskUnderway(...) = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
