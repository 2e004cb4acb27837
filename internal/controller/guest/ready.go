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
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// MayUpdate reports whether the management policies let the provider
// change the guest.
func MayUpdate(mg resource.ModernManaged) bool {
	for _, a := range mg.GetManagementPolicies() {
		if a == xpv2.ManagementActionAll || a == xpv2.ManagementActionUpdate {
			return true
		}
	}
	return false
}

// Readiness is what Observe learnt that decides a guest resource's Ready
// condition.
type Readiness struct {
	// Manage: the policies let the provider change the guest.
	Manage bool
	// Converged: the guest needs no change (refusals aside).
	Converged bool
	// WasReady: the resource was Ready before this observation.
	WasReady bool
	// Busy: PVE works on the guest (a lock, or a task of ours runs).
	Busy bool
	// PowerDrift: the guest's power state is not the one the spec asks for
	// (stopped and should run, or running and should be stopped).
	PowerDrift bool
	// Settling: a power task of ours (reboot, shutdown, stop) is under way.
	Settling bool
	// LastTask is the resource's status.lastTask.
	LastTask *v1alpha1.TaskStatus
}

// Set sets mg's Ready condition. Before the first Ready the guest must have
// converged (configuration, power); afterwards drift being corrected does
// not flip it, only a lock, a task, a power state other than the spec's, or
// a failed task. A failed task shows on Ready with PVE's message while the
// work it was for is still undone.
func (r Readiness) Set(mg resource.Managed) {
	gen := mg.GetGeneration()
	if lt := r.LastTask; r.Manage && !r.Converged && LastTaskFailed(lt) {
		mg.SetConditions(xpv2.Unavailable().WithMessage(TaskFailedMessage(lt)).WithObservedGeneration(gen))
		return
	}
	var ready bool
	switch {
	case !r.Manage:
		ready = !r.Busy
	case r.WasReady:
		ready = !r.Busy && !r.PowerDrift
	default:
		ready = !r.Busy && r.Converged && !r.Settling
	}
	switch {
	case ready:
		mg.SetConditions(xpv2.Available().WithObservedGeneration(gen))
	case r.WasReady:
		mg.SetConditions(xpv2.Unavailable().WithObservedGeneration(gen))
	default:
		mg.SetConditions(xpv2.Creating().WithObservedGeneration(gen))
	}
}
