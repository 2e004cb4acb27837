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

package container

import (
	"context"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// ErrReplaceProtected is a replacement of the container (its source
// changed) that deletionProtection forbids.
var ErrReplaceProtected = errors.New("deletionProtection is set, so the container is not replaced")

// Update implements managed.TypedExternalClient. One step per reconcile: a
// replacement when the source changed; else configuration first, then the
// power state (a start, a shutdown, or a restart for pending changes) once
// it has converged.
func (e *external) Update(ctx context.Context, cr *v1alpha1.Container) (managed.ExternalUpdate, error) {
	o, err := e.obs.Last()
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	if !o.Actionable() {
		return managed.ExternalUpdate{}, nil
	}
	if o.replace != "" {
		return managed.ExternalUpdate{}, e.replaceStep(ctx, cr, o)
	}
	if o.migration == guest.MigrateNow {
		// Before any configuration change: PVE locks the container while
		// it moves.
		return managed.ExternalUpdate{}, e.migrate(ctx, cr, o)
	}
	if !o.haRes.Converged() {
		// Its own step: HA decides the power of the guest it manages.
		ev, err := o.haRes.Apply(ctx, e.cl, o.Ref)
		if err == nil {
			e.Record.Event(cr, ev)
		}
		return managed.ExternalUpdate{}, err
	}
	changed, err := e.applyConfig(ctx, cr, o)
	if err != nil || changed {
		// The change log names the fields written, never their values.
		return managed.ExternalUpdate{AdditionalDetails: changelog.Fields(o.plan.Fields)}, err
	}
	p := guest.Power{Client: e.cl, Record: e.Record, Noun: "container", RebootTimeout: rebootTimeout, ShutdownTimeout: o.want.ShutdownTimeout}
	need := guest.PowerNeeds{Start: o.Need.Start, Stop: o.Need.Stop, Reboot: o.Need.Reboot}
	booted, err := p.Apply(ctx, cr, &cr.Status.LastTask, &o.Current, o.Ref, need, o.PendingKeys)
	if booted {
		// A boot changes the addresses and applies what was pending.
		cr.Status.IPAddresses, cr.Status.Status.IPAddress, cr.Status.PendingChanges = nil, "", nil
		e.interfacesAsked.Forget(cr.GetUID())
	}
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	return managed.ExternalUpdate{}, guest.Refused(o.plan.Refused)
}

// replaceStep takes the next step of replacing the container (shutdown,
// stop, destroy; Create then makes the new one at the same VMID), unless
// deletionProtection blocks it, which the Synced condition then says.
func (e *external) replaceStep(ctx context.Context, cr *v1alpha1.Container, o *observation) error {
	if cr.Spec.DeletionProtection {
		return errors.Errorf("%s: %w", o.replace, ErrReplaceProtected)
	}
	e.Record.Event(cr, event.Normal(reasonReplacing, "replacing container "+o.Ref.String()+": "+o.replace))
	d := guest.Deleter{Client: e.cl, Record: e.Record, Noun: "container", ShutdownTimeout: shutdownTimeout}
	return d.Step(ctx, cr, &cr.Status.LastTask, o.Ref)
}

// applyConfig writes drifted keys (PUT config, which also allocates new
// mount points), then grows one volume (async). It reports whether it
// changed anything.
func (e *external) applyConfig(ctx context.Context, cr *v1alpha1.Container, o *observation) (bool, error) {
	set := make(map[string]string, len(o.plan.Set)+1)
	for k, v := range o.plan.Set {
		set[k] = v
	}
	if o.NeedMarker {
		set["description"] = guest.WithMarker(pve.Description(o.Cfg), e.identity().MarkerOf(cr))
	}
	if len(set) > 0 || len(o.plan.Delete) > 0 {
		if err := e.cl.SetGuestConfig(ctx, o.Ref, set, o.plan.Delete); err != nil {
			return guest.RetryIfLocked(err, "configuration")
		}
		guest.ReportConfigured(e.Record, cr, o.plan.Fields, o.WasReady, o.SpecChanged)
		if o.NeedMarker {
			e.observer().Adopted(cr)
		}
		if o.Running {
			// Until the next Observe reads what PVE left pending, assume
			// all of it, so the resource is observed again within seconds.
			cr.Status.PendingChanges = guest.MergeKeys(cr.Status.PendingChanges, slices.DeleteFunc(slices.Clone(o.plan.Fields), appliesAtOnce))
		}
		return true, nil
	}
	if len(o.plan.Resizes) > 0 {
		r := o.plan.Resizes[0]
		upid, err := e.cl.ResizeDisk(ctx, o.Ref, r.Disk, r.Size)
		if err != nil {
			return guest.RetryIfLocked(err, "resize")
		}
		guest.RecordTask(&cr.Status.LastTask, upid)
		e.Record.Event(cr, event.Normal(reasonResized, "growing volume "+r.Disk+" to "+r.Size))
		return true, nil
	}
	return false, nil
}

// appliesAtOnce reports whether a change of k never waits for a restart:
// the root filesystem or a mount point (it grows live) and the keys PVE
// applies at once.
func appliesAtOnce(k string) bool {
	return k == "rootfs" || strings.HasPrefix(k, "mp") || !pve.LXCFields.WaitsForBoot(k)
}
