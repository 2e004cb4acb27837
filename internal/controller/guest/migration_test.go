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
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

func TestPlacementObserve(t *testing.T) {
	now := time.Now()
	long := metav1.NewTime(now.Add(-2 * HAMigrationWait))
	failedAt := func(gen int64) *v1alpha1.MigrationStatus {
		return &v1alpha1.MigrationStatus{From: "a", To: "b", Result: v1alpha1.MigrationFailed, ObservedGeneration: gen}
	}
	running := &v1alpha1.MigrationStatus{From: "a", To: "b", UPID: "UPID:a:1", Result: v1alpha1.MigrationRunning, StartTime: &long, ObservedGeneration: 1}
	cases := map[string]struct {
		reason        string
		requested     string
		specNode      string
		node          string
		running       bool
		policy        v1alpha1.MigrationPolicy
		last          *v1alpha1.MigrationStatus
		lastTask      *v1alpha1.TaskStatus
		want          MigrationDecision
		wantRequested string
		wantResult    string
	}{
		"FirstSight": {reason: "Nothing was asked before: record the spec's node, never migrate.",
			specNode: "b", node: "a", want: NoMigration, wantRequested: "b"},
		"Unchanged": {reason: "The spec asks for the node last acted on.",
			requested: "a", specNode: "a", node: "c", want: NoMigration, wantRequested: "a"},
		"Changed": {reason: "A changed nodeName asks for a move.",
			requested: "a", specNode: "b", node: "a", want: MigrateNow, wantRequested: "a"},
		"AlreadyThere": {reason: "A guest already on the new node needs no move.",
			requested: "a", specNode: "b", node: "b", want: NoMigration, wantRequested: "b"},
		"OfflineRunning": {reason: "Offline on a running guest stops it first.",
			requested: "a", specNode: "b", node: "a", running: true, policy: v1alpha1.MigrationPolicyOffline, want: StopThenMigrate, wantRequested: "a"},
		"Never": {reason: "Never accepts the new nodeName without moving.",
			requested: "a", specNode: "b", node: "a", policy: v1alpha1.MigrationPolicyNever, want: NoMigration, wantRequested: "b"},
		"FailedSameSpec": {reason: "A failed migration waits for a change of the spec.",
			requested: "a", specNode: "b", node: "a", last: failedAt(1), want: NoMigration, wantRequested: "a", wantResult: v1alpha1.MigrationFailed},
		"FailedNewSpec": {reason: "A new generation retries.",
			requested: "a", specNode: "b", node: "a", last: failedAt(0), want: MigrateNow, wantRequested: "a", wantResult: v1alpha1.MigrationFailed},
		"Arrived": {reason: "A running migration succeeds once the guest runs on its target.",
			requested: "a", specNode: "b", node: "b", last: running, want: NoMigration, wantRequested: "b", wantResult: v1alpha1.MigrationSucceeded},
		"TaskFailed": {reason: "A failed migration task fails the migration.",
			requested: "a", specNode: "b", node: "a", last: running, lastTask: &v1alpha1.TaskStatus{UPID: "UPID:a:1", Status: TaskStopped, ExitStatus: "migration aborted"},
			want: NoMigration, wantRequested: "a", wantResult: v1alpha1.MigrationFailed},
		"HANeverMoved": {reason: "An HA hand-over that never moved the guest fails after HAMigrationWait.",
			requested: "a", specNode: "b", node: "a", last: running, lastTask: &v1alpha1.TaskStatus{UPID: "UPID:a:1", Status: TaskStopped, ExitStatus: "OK"},
			want: NoMigration, wantRequested: "a", wantResult: v1alpha1.MigrationFailed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
			vm.Status.RequestedNode = tc.requested
			if tc.last != nil {
				lm := *tc.last
				vm.Status.LastMigration = &lm
			}
			p := Placement{Record: event.NewNopRecorder(), Object: vm, Status: &vm.Status.GuestPlacement, LastTask: tc.lastTask,
				SpecNode: tc.specNode, Policy: tc.policy, Noun: "VM"}
			got := p.Observe(tc.node, tc.running, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nObserve(): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantRequested, vm.Status.RequestedNode); diff != "" {
				t.Errorf("%s\nrequestedNode: -want, +got:\n%s", tc.reason, diff)
			}
			result := ""
			if vm.Status.LastMigration != nil {
				result = vm.Status.LastMigration.Result
			}
			if tc.wantResult != "" && result != tc.wantResult {
				t.Errorf("%s\nlastMigration.result = %q, want %q", tc.reason, result, tc.wantResult)
			}
		})
	}
}
