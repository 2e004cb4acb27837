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

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/ha"
)

// Delete implements managed.TypedExternalClient: one step per reconcile
// (shutdown, stop, destroy with purge; see guest.Deleter), once Observe saw
// an owned guest with nothing under way.
func (e *external) Delete(ctx context.Context, cr *v1alpha1.VirtualMachine) (managed.ExternalDelete, error) {
	o, err := e.obs.Last()
	if err != nil {
		return managed.ExternalDelete{}, err
	}
	if !o.Actionable() {
		return managed.ExternalDelete{}, nil
	}
	// Out of HA first, so HA neither restarts nor relocates the guest being
	// shut down; a step of its own.
	if released, err := ha.Release(ctx, e.cl, o.Ref, cr.Spec.HA, &cr.Status.HA); err != nil || released {
		return managed.ExternalDelete{}, err
	}
	d := guest.Deleter{Client: e.cl, Record: e.Record, Noun: "VM", ShutdownTimeout: shutdownTimeout}
	return managed.ExternalDelete{}, d.Step(ctx, cr, &cr.Status.LastTask, o.Ref)
}
