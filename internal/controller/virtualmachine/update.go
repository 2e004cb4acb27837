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
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// Update implements managed.TypedExternalClient. One step per reconcile:
// configuration first; the first start (or a reboot for pending changes)
// only once the configuration has converged.
func (e *external) Update(ctx context.Context, cr *v1alpha1.VirtualMachine) (managed.ExternalUpdate, error) {
	o, err := e.obs.Last()
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	if !o.Actionable() {
		return managed.ExternalUpdate{}, nil
	}
	if o.migration == guest.MigrateNow {
		// Before any configuration change: PVE locks the VM while it moves.
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
	if err := e.applyPower(ctx, cr, o); err != nil {
		return managed.ExternalUpdate{}, err
	}
	return managed.ExternalUpdate{}, guest.Refused(o.plan.Refused)
}

// applyConfig writes drifted keys (PUT), then allocates new disks or grows
// one (async). It reports whether it changed anything.
func (e *external) applyConfig(ctx context.Context, cr *v1alpha1.VirtualMachine, o *observation) (bool, error) {
	set := make(map[string]string, len(o.plan.Set)+2)
	for k, v := range o.plan.Set {
		set[k] = v
	}
	if o.NeedMarker {
		set["description"] = guest.WithMarker(pve.Description(o.Cfg), e.identity().MarkerOf(cr))
	}
	if o.needPass {
		set["cipassword"] = o.want.Password.Value
	}
	if _, ok := set["cicustom"]; ok {
		// PVE stores any volume ID and fails only at the next start.
		if err := e.cl.CheckPrerequisites(ctx, pve.Prerequisites{Node: o.Ref.Node, Volumes: o.want.Spec.CloudInit.CustomVolumes()}); err != nil {
			return false, errors.Wrap(err, "cannot write cloudInitConfig.custom")
		}
	}
	if len(set) > 0 {
		if err := e.cl.SetGuestConfig(ctx, o.Ref, set, nil); err != nil {
			return guest.RetryIfLocked(scrubPassword(err, o.want.Password), "configuration")
		}
		if o.needPass {
			v := o.want.Password.Version
			cr.Status.CloudInitPasswordApplied = &v
		}
		e.reportConfig(cr, o)
		if o.Running {
			// Until the next Observe tells what PVE left pending (cloud-init
			// keys never show in /pending), assume all of it: the resource is
			// then observed again within seconds, not after the poll interval.
			cr.Status.PendingChanges = guest.MergeKeys(cr.Status.PendingChanges, changedKeys(set))
		}
		return true, nil
	}
	if len(o.plan.NewDisks) > 0 {
		upid, err := e.cl.SetGuestConfigAsync(ctx, o.Ref, o.plan.NewDisks, nil)
		if err != nil {
			return guest.RetryIfLocked(err, "new disks")
		}
		guest.RecordTask(&cr.Status.LastTask, upid)
		e.Record.Event(cr, event.Normal(reasonDiskAdded, "adding disks "+strings.Join(slices.Sorted(maps.Keys(o.plan.NewDisks)), ", ")))
		return true, nil
	}
	if len(o.plan.Resizes) > 0 {
		r := o.plan.Resizes[0]
		upid, err := e.cl.ResizeDisk(ctx, o.Ref, r.Disk, r.Size)
		if err != nil {
			return guest.RetryIfLocked(err, "resize")
		}
		guest.RecordTask(&cr.Status.LastTask, upid)
		e.Record.Event(cr, event.Normal(reasonResized, "growing disk "+r.Disk+" to "+r.Size))
		return true, nil
	}
	return false, nil
}

// scrubPassword keeps the cloud-init password out of an error that ends up
// in a condition and an event, should PVE ever echo the value.
func scrubPassword(err error, pw *guest.CloudInitPassword) error {
	if err == nil || pw == nil || pw.Value == "" || !strings.Contains(err.Error(), pw.Value) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pw.Value, "*****"))
}

func (e *external) reportConfig(cr *v1alpha1.VirtualMachine, o *observation) {
	guest.ReportConfigured(e.Record, cr, o.plan.Fields, o.WasReady, o.SpecChanged)
	if o.NeedMarker {
		e.observer().Adopted(cr)
	}
	if o.needPass {
		e.Record.Event(cr, event.Normal(reasonPasswordApplied, "applied the cloud-init password"))
	}
}

// changedKeys lists the keys a config change touched that may wait for a
// reboot: not the description nor the keys PVE applies at once.
func changedKeys(set map[string]string) []string {
	var keys []string
	for k := range set {
		if k != "description" && pve.QEMUFields.WaitsForBoot(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// applyPower starts a guest that should run, shuts down one that should
// be stopped, or reboots one to apply pending changes (see guest.Power).
func (e *external) applyPower(ctx context.Context, cr *v1alpha1.VirtualMachine, o *observation) error {
	p := guest.Power{Client: e.cl, Record: e.Record, Noun: "VM", RebootTimeout: rebootTimeout, ShutdownTimeout: o.want.ShutdownTimeout}
	need := guest.PowerNeeds{Start: o.Need.Start, Stop: o.Need.Stop, Reboot: o.Need.Reboot}
	booted, err := p.Apply(ctx, cr, &cr.Status.LastTask, &o.Current, o.Ref, need, o.PendingKeys)
	if booted {
		e.afterBoot(cr)
	}
	return err
}

// afterBoot forgets what a boot changes: the IP is asked again, and
// cloud-init changes reach the guest.
func (e *external) afterBoot(cr *v1alpha1.VirtualMachine) {
	cr.Status.Status.IPAddress = ""
	cr.Status.PendingChanges = nil
	e.agentAsked.Forget(cr.GetUID())
}
