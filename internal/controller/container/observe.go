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
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/ha"
	"github.com/kubemox/provider-proxmox/internal/controller/placement"
)

// external is the client of one reconcile. Observe leaves what it saw in obs
// for Update and Delete of the same reconcile.
type external struct {
	*connector
	cl         proxmox
	connection string

	// obs is what this reconcile's Observe learnt, for Update and Delete.
	obs guest.Observed[observation]
}

// observation is what Observe learnt, for Update and Delete.
type observation struct {
	guest.Observation
	want desired
	plan pve.LXCPlan
	// replace says why the container must be replaced ("" when not).
	replace string
	// migration is what the placement decided.
	migration guest.MigrationDecision
	// moving: a migration we started has not arrived yet.
	moving bool
	// haRes is the guest's HA resource against spec.ha.
	haRes ha.Observation
}

// identity is how this reconcile finds, claims and gives up LXC VMIDs.
func (e *external) identity() guest.Identity {
	return e.Identity(e.cl, e.connection, pve.LXC, "container")
}

// observer runs the part of Observe every guest kind shares.
func (e *external) observer() guest.Observer {
	return e.Observer(e.identity(), e.interfacesAsked)
}

// Disconnect implements managed.TypedExternalClient.
func (e *external) Disconnect(context.Context) error { return nil }

// converged reports whether the container needs no change (refusals aside).
func (o *observation) converged() bool {
	return o.plan.Empty() && o.replace == "" && !o.NeedMarker && !o.PowerDrift() && !o.Need.Reboot &&
		o.migration == guest.NoMigration && !o.moving && o.haRes.Converged()
}

// Observe implements managed.TypedExternalClient.
func (e *external) Observe(ctx context.Context, cr *v1alpha1.Container) (managed.ExternalObservation, error) {
	placement.Follow(cr, &cr.Status.Placement)
	o := e.obs.Begin()
	t := guest.Tracked{VMID: &cr.Status.VMID, LastTask: &cr.Status.LastTask, LastNode: cr.Status.Status.Node, SpecNode: placement.Intended(cr.Spec.NodeName, cr.Status.Placement), Protected: cr.Spec.DeletionProtection,
		Adopt: &guest.AdoptTarget{Name: cr.Spec.Name, Status: &cr.Status.Adoption}}
	return e.observer().Observe(ctx, cr, t, &o.Observation, func(row *pve.Resource) (managed.ExternalObservation, error) {
		return e.observeOwned(ctx, cr, o, row)
	})
}

// observeOwned compares an owned (or imported) container with the spec.
func (e *external) observeOwned(ctx context.Context, cr *v1alpha1.Container, o *observation, row *pve.Resource) (managed.ExternalObservation, error) {
	// Late-init first: what it fills is what the guest has, so no diff.
	lateInited := guest.MayLateInit(cr) && lateInit(&cr.Spec, o.Cfg)
	want, err := desiredFrom(ctx, e.secrets, cr)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	want.Running, want.Stopped = ha.PowerWant(cr.Spec.HA, want.Running, want.Stopped)
	o.want = want
	running, err := guest.PowerState(ctx, e.cl, &o.Current, o.Ref, row, guest.PowerWant{Running: want.Running, Stopped: want.Stopped})
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	o.Running = running
	manage := guest.MayUpdate(cr)
	o.plan = pve.DiffLXC(want.Spec, o.Cfg)
	o.NeedMarker = manage && guest.NeedsMarker(o.Own, pve.Description(o.Cfg), e.identity().MarkerOf(cr))
	cr.Status.Source = recordedSource(cr.GetAnnotations())
	o.replace = replacement(cr.Status.Source, cr.Spec.Source())
	o.PendingKeys = o.Cfg.PendingKeys()
	if manage {
		if o.haRes, err = ha.Observe(ctx, e.cl, o.Ref, cr.Spec.HA, &cr.Status.HA); err != nil {
			return managed.ExternalObservation{}, err
		}
		p := e.placement(cr)
		o.migration = p.Observe(o.Ref.Node, running, time.Now())
		o.moving = p.Underway()
	}
	settling := powerSettling(cr)
	migrationAsked := o.migration != guest.NoMigration
	// A container about to move is started on its target, not before.
	o.Need.Start = want.Running && !running && !settling && !migrationAsked
	o.Need.Stop = (want.Stopped || o.migration == guest.StopThenMigrate) && running && !settling
	// A container kept stopped (or about to move) is not restarted: what is
	// pending takes effect at its next start.
	o.Need.Reboot = running && !want.Stopped && !migrationAsked && want.AllowReboot && len(o.PendingKeys) > 0 && !settling
	cr.Status.PendingChanges = o.PendingKeys

	e.observeInterfaces(ctx, cr, o)
	guest.FillStatus(&cr.Status.Status, o.Ref, o.Running, row)
	guest.Readiness{
		Manage: manage, Converged: o.converged(), WasReady: o.WasReady, Busy: o.Busy(),
		PowerDrift: o.PowerDrift(), Settling: settling, LastTask: cr.Status.LastTask,
	}.Set(cr)

	// Nothing can change while PVE works on the container.
	upToDate := o.Busy() || (o.converged() && len(o.plan.Refused) == 0)
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        upToDate,
		ResourceLateInitialized: lateInited,
		ConnectionDetails:       connectionDetails(cr, o),
		Diff:                    strings.Join(o.plan.Fields, ","),
	}, nil
}

// lxcPowerTasks are the tasks after which a container's power state is
// still settling.
var lxcPowerTasks = guest.PowerTasks(pve.LXC)

func powerSettling(cr *v1alpha1.Container) bool {
	return guest.TaskUnderwayOfType(cr.Status.LastTask, lxcPowerTasks...)
}

// observeInterfaces asks PVE for the container's addresses while none is
// known (throttled), and forgets them when it stops.
func (e *external) observeInterfaces(ctx context.Context, cr *v1alpha1.Container, o *observation) {
	st := &cr.Status
	if !o.Running {
		st.IPAddresses, st.Status.IPAddress = nil, ""
		return
	}
	if len(st.IPAddresses) > 0 || !e.interfacesAsked.Due(cr.GetUID(), time.Now(), interfacesRetry) {
		return
	}
	ifs, err := e.cl.ContainerInterfaces(ctx, o.Ref)
	if err != nil {
		// Not running after all, or an older PVE: unknown for now.
		return
	}
	st.IPAddresses = pve.UsableAddresses(ifs)
	st.Status.IPAddress = pve.FirstIPv4(ifs)
}

// connectionDetails publishes how to reach the container; never a Proxmox
// credential.
func connectionDetails(cr *v1alpha1.Container, o *observation) managed.ConnectionDetails {
	cd := managed.ConnectionDetails{
		guest.ConnectionDetailVMID: []byte(strconv.Itoa(o.Ref.VMID)),
		guest.ConnectionDetailNode: []byte(o.Ref.Node),
	}
	if ip := cr.Status.Status.IPAddress; ip != "" {
		cd[guest.ConnectionDetailIPAddress] = []byte(ip)
	}
	if pw := o.want.Create.Password; pw != "" {
		cd[guest.ConnectionDetailPassword] = []byte(pw)
	}
	return cd
}
