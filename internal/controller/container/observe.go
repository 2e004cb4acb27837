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

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// external is the client of one reconcile. Observe leaves what it saw in obs
// for Update and Delete of the same reconcile.
type external struct {
	*connector
	cl         *pve.Client
	connection string

	obs *observation
}

// observation is what Observe learnt, for Update and Delete.
type observation struct {
	ref         pve.GuestRef
	cfg         pve.GuestConfig
	own         guest.Ownership
	want        desired
	plan        pve.LXCPlan
	locked      string
	running     bool
	taskRunning bool
	wasReady    bool
	// specChanged: the spec changed since the last successful sync, so a
	// difference is a change asked for, not drift.
	specChanged bool
	needMarker  bool
	needStart   bool
	needStop    bool
	needReboot  bool
	// replace says why the container must be replaced ("" when not).
	replace     string
	pendingKeys []string
	current     guest.CurrentStatus
}

// identity is how this reconcile finds, claims and gives up LXC VMIDs.
func (e *external) identity() guest.Identity {
	return guest.Identity{Kube: e.kube, Client: e.cl, Connection: e.connection, VMIDs: e.vmids, Record: e.record, Type: pve.LXC, Noun: "container"}
}

// Disconnect implements managed.TypedExternalClient.
func (e *external) Disconnect(context.Context) error { return nil }

// busy reports whether PVE works on the container (a lock or our task).
func (o *observation) busy() bool { return o.locked != "" || o.taskRunning }

// actionable reports whether Update and Delete may act on what Observe saw.
func (o *observation) actionable() bool {
	return o != nil && o.ref.Node != "" && o.own != guest.InProgress && !o.busy()
}

// converged reports whether the container needs no change (refusals aside).
func (o *observation) converged() bool {
	return o.plan.Empty() && o.replace == "" && !o.needMarker && !o.powerDrift() && !o.needReboot
}

// powerDrift reports whether the container's power state is not the one
// the spec asks for.
func (o *observation) powerDrift() bool { return o.needStart || o.needStop }

// Observe implements managed.TypedExternalClient.
func (e *external) Observe(ctx context.Context, cr *v1alpha1.Container) (managed.ExternalObservation, error) {
	if meta.WasDeleted(cr) {
		e.observed.Forget(cr.GetUID())
		e.interfacesAsked.Forget(cr.GetUID())
	}
	name := meta.GetExternalName(cr)
	if name == "" {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	vmid, ok := guest.VMIDOf(name)
	if !ok {
		return managed.ExternalObservation{}, errors.Errorf("external name %q is not a VMID", name)
	}
	if guest.KeptByProtection(e.record, cr, cr.Spec.DeletionProtection, "container "+name) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	o := &observation{wasReady: guest.IsReady(cr), specChanged: cr.GetCondition(xpv2.TypeSynced).ObservedGeneration != cr.GetGeneration()}
	e.obs = o
	maxAge := guest.ListingAge(cr, cr.Status.LastTask, e.observed, e.steadyAge)
	loc, err := e.identity().Locate(ctx, vmid, maxAge, guest.CandidateNodes(cr.Status.Status.Node, cr.Spec.NodeName))
	if err != nil || !loc.Found {
		return managed.ExternalObservation{ResourceExists: loc.Found && err == nil}, err
	}
	found, obs, err := e.identity().Resolve(ctx, cr, &cr.Status.VMID, vmid, loc, &o.current)
	if found == nil {
		return obs, err
	}
	o.ref, o.cfg, o.locked, o.own = found.Ref, found.Cfg, found.Lock, found.Own
	guest.FollowCreateTask(cr, &cr.Status.LastTask)
	running, err := guest.RefreshTask(ctx, e.cl, e.record, cr, cr.Status.LastTask)
	o.taskRunning = running
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if meta.WasDeleted(cr) {
		return managed.ExternalObservation{ResourceExists: true}, nil
	}
	return e.observeOwned(ctx, cr, o, found.Row)
}

// observeOwned compares an owned (or imported) container with the spec.
func (e *external) observeOwned(ctx context.Context, cr *v1alpha1.Container, o *observation, row *pve.Resource) (managed.ExternalObservation, error) {
	want, err := desiredFrom(ctx, e.secrets, cr)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	o.want = want
	running, err := guest.PowerState(ctx, e.cl, &o.current, o.ref, row, guest.PowerWant{Running: want.Running, Stopped: want.Stopped})
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	o.running = running
	manage := guest.MayUpdate(cr)
	o.plan = pve.DiffLXC(want.Spec, o.cfg)
	o.needMarker = manage && (o.own == guest.MineNewUID || o.own == guest.Imported)
	cr.Status.Source = recordedSource(cr.GetAnnotations())
	o.replace = replacement(cr.Status.Source, cr.Spec.Source())
	o.pendingKeys = o.cfg.PendingKeys()
	settling := powerSettling(cr)
	o.needStart = want.Running && !running && !settling
	o.needStop = want.Stopped && running && !settling
	// A container kept stopped is not restarted: what is pending takes
	// effect at its next start.
	o.needReboot = running && !want.Stopped && want.AllowReboot && len(o.pendingKeys) > 0 && !settling
	cr.Status.PendingChanges = o.pendingKeys

	e.observeInterfaces(ctx, cr, o)
	guest.FillStatus(&cr.Status.Status, o.ref, o.running, row)
	guest.Readiness{
		Manage: manage, Converged: o.converged(), WasReady: o.wasReady, Busy: o.busy(),
		PowerDrift: o.powerDrift(), Settling: settling, LastTask: cr.Status.LastTask,
	}.Set(cr)

	// Nothing can change while PVE works on the container.
	upToDate := o.busy() || (o.converged() && len(o.plan.Refused) == 0)
	return managed.ExternalObservation{
		ResourceExists:    true,
		ResourceUpToDate:  upToDate,
		ConnectionDetails: connectionDetails(cr, o),
		Diff:              strings.Join(o.plan.Fields, ","),
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
	if !o.running {
		st.IPAddresses, st.Status.IPAddress = nil, ""
		return
	}
	if len(st.IPAddresses) > 0 || !e.interfacesAsked.Due(cr.GetUID(), time.Now(), interfacesRetry) {
		return
	}
	ifs, err := e.cl.ContainerInterfaces(ctx, o.ref)
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
		guest.ConnectionDetailVMID: []byte(strconv.Itoa(o.ref.VMID)),
		guest.ConnectionDetailNode: []byte(o.ref.Node),
	}
	if ip := cr.Status.Status.IPAddress; ip != "" {
		cd[guest.ConnectionDetailIPAddress] = []byte(ip)
	}
	if pw := o.want.Create.Password; pw != "" {
		cd[guest.ConnectionDetailPassword] = []byte(pw)
	}
	return cd
}
