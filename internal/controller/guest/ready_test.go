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

	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

func TestReadinessSet(t *testing.T) {
	failed := &v1alpha1.TaskStatus{Type: "qmstart", Status: TaskStopped, ExitStatus: "no such bridge"}
	cases := map[string]struct {
		reason string
		r      Readiness
		status corev1.ConditionStatus
		why    xpv2.ConditionReason
	}{
		"Converged":         {reason: "A managed guest that converged is Ready.", r: Readiness{Manage: true, Converged: true}, status: corev1.ConditionTrue, why: xpv2.ReasonAvailable},
		"NotYet":            {reason: "Before the first Ready, unconverged is Creating.", r: Readiness{Manage: true}, status: corev1.ConditionFalse, why: xpv2.ReasonCreating},
		"SettlingFirst":     {reason: "Before the first Ready, a reboot of ours under way is Creating.", r: Readiness{Manage: true, Converged: true, Settling: true}, status: corev1.ConditionFalse, why: xpv2.ReasonCreating},
		"DriftAfterReady":   {reason: "Drift being corrected does not flip Ready.", r: Readiness{Manage: true, WasReady: true}, status: corev1.ConditionTrue, why: xpv2.ReasonAvailable},
		"StoppedAfter":      {reason: "A power state other than the spec's (stopped that should run, running that should be stopped) is Unavailable once it was Ready.", r: Readiness{Manage: true, WasReady: true, PowerDrift: true}, status: corev1.ConditionFalse, why: xpv2.ReasonUnavailable},
		"ObserveOnlyBusy":   {reason: "Observe-only: Ready unless PVE works on the guest.", r: Readiness{Busy: true}, status: corev1.ConditionFalse, why: xpv2.ReasonCreating},
		"FailedTask":        {reason: "A failed task shows while its work is undone.", r: Readiness{Manage: true, WasReady: true, LastTask: failed}, status: corev1.ConditionFalse, why: xpv2.ReasonUnavailable},
		"FailedButDone":     {reason: "A failed task no longer matters once converged.", r: Readiness{Manage: true, Converged: true, LastTask: failed}, status: corev1.ConditionTrue, why: xpv2.ReasonAvailable},
		"FailedObserveOnly": {reason: "Observe-only ignores our failed tasks.", r: Readiness{LastTask: failed}, status: corev1.ConditionTrue, why: xpv2.ReasonAvailable},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vm := &v1alpha1.VirtualMachine{}
			tc.r.Set(vm)
			c := vm.GetCondition(xpv2.TypeReady)
			if c.Status != tc.status || c.Reason != tc.why {
				t.Errorf("%s\nReady = %s/%s, want %s/%s", tc.reason, c.Status, c.Reason, tc.status, tc.why)
			}
		})
	}
}
