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
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
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
