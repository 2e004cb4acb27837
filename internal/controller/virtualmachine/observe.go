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
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// external is the client of one reconcile. Observe leaves what it saw in obs
// for Update and Delete of the same reconcile.
type external struct {
	kube       client.Client
	secrets    client.Reader
	cl         *pve.Client
	connection string
	vmids      *pve.VMIDAllocator
	record     event.Recorder
	steadyAge  time.Duration
	agentAsked *guest.Stamps
	observed   *guest.Stamps

	obs *observation
}

// observation is what Observe learnt, for Update and Delete.
type observation struct {
	ref         pve.GuestRef
	cfg         pve.GuestConfig
	own         guest.Ownership
	want        desired
	plan        pve.VMPlan
	locked      string
	running     bool
	taskRunning bool
	wasReady    bool
	// specChanged: the spec changed since the last successful sync, so a
	// difference is a change asked for, not drift.
	specChanged bool
	needMarker  bool
	needPass    bool
	needStart   bool
	needStop    bool
	migration   guest.MigrationDecision
	// moving: a migration we started has not arrived yet.
	moving      bool
	needReboot  bool
	pendingKeys []string
	// current is status/current, read at most once per reconcile: Update
	// acts on what Observe read rather than asking PVE again.
	current guest.CurrentStatus
}

// identity is how this reconcile finds, claims and gives up QEMU VMIDs.
func (e *external) identity() guest.Identity {
	return guest.Identity{Kube: e.kube, Client: e.cl, Connection: e.connection, VMIDs: e.vmids, Record: e.record, Type: pve.QEMU, Noun: "VM"}
}

// Disconnect implements managed.TypedExternalClient.
func (e *external) Disconnect(context.Context) error { return nil }

// busy reports whether PVE works on the guest (a lock or our task).
func (o *observation) busy() bool { return o.locked != "" || o.taskRunning }

// actionable reports whether Update and Delete may act on what Observe saw:
// an owned guest placed on a node, with nothing under way.
func (o *observation) actionable() bool {
	return o != nil && o.ref.Node != "" && o.own != guest.InProgress && !o.busy()
}

// converged reports whether the guest needs no change (refusals aside).
func (o *observation) converged() bool {
	return o.plan.Empty() && !o.needMarker && !o.needPass && !o.powerDrift() && !o.needReboot && o.migration == guest.NoMigration && !o.moving
}

// powerDrift reports whether the guest's power state is not the one the
// spec asks for.
func (o *observation) powerDrift() bool { return o.needStart || o.needStop }

// Observe implements managed.TypedExternalClient.
func (e *external) Observe(ctx context.Context, cr *v1alpha1.VirtualMachine) (managed.ExternalObservation, error) {
	if meta.WasDeleted(cr) {
		// Per-resource memory goes with the resource, whichever way it is
		// deleted (protected, lost, or destroyed).
		e.observed.Forget(cr.GetUID())
		e.agentAsked.Forget(cr.GetUID())
	}
	name := meta.GetExternalName(cr)
	if name == "" {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	vmid, ok := guest.VMIDOf(name)
	if !ok {
		return managed.ExternalObservation{}, errors.Errorf("external name %q is not a VMID", name)
	}
	if guest.KeptByProtection(e.record, cr, cr.Spec.DeletionProtection, "VM "+name) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	o := &observation{wasReady: guest.IsReady(cr), specChanged: cr.GetCondition(xpv2.TypeSynced).ObservedGeneration != cr.GetGeneration()}
	e.obs = o

	loc, err := e.identity().Locate(ctx, vmid, guest.ListingAge(cr, cr.Status.LastTask, e.observed, e.steadyAge), guest.CandidateNodes(cr.Status.Status.Node, cr.Spec.NodeName))
	if err != nil || !loc.Found {
		return managed.ExternalObservation{ResourceExists: loc.Found && err == nil}, err
	}
	found, obs, err := e.identity().Resolve(ctx, cr, &cr.Status.VMID, vmid, loc, &o.current)
	if found == nil {
		return obs, err
	}
	o.ref, o.cfg, o.locked, o.own = found.Ref, found.Cfg, found.Lock, found.Own
	row := found.Row
	guest.FollowCreateTask(cr, &cr.Status.LastTask)
	if err := e.refreshTask(ctx, cr, o); err != nil {
		return managed.ExternalObservation{}, err
	}
	if meta.WasDeleted(cr) {
		return managed.ExternalObservation{ResourceExists: true}, nil
	}
	return e.observeOwned(ctx, cr, o, row)
}

// observeOwned compares an owned (or imported) guest with the spec.
func (e *external) observeOwned(ctx context.Context, cr *v1alpha1.VirtualMachine, o *observation, row *pve.Resource) (managed.ExternalObservation, error) {
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
	o.plan = pve.Diff(want.Spec, o.cfg)
	o.needMarker = manage && (o.own == guest.MineNewUID || o.own == guest.Imported)
	o.needPass = passwordNeedsApply(cr, want.Password)
	o.pendingKeys = e.pendingKeys(ctx, cr, o)
	if manage {
		p := e.placement(cr)
		o.migration = p.Observe(o.ref.Node, running, time.Now())
		o.moving = p.Underway()
	}
	migrationAsked := o.migration != guest.NoMigration
	// A guest about to move is started on its target, not before.
	o.needStart = want.Running && !running && !rebootUnderway(cr) && !migrationAsked
	o.needStop = (want.Stopped || o.migration == guest.StopThenMigrate) && running && !rebootUnderway(cr)
	// A guest kept stopped is stopped rather than rebooted: what is pending
	// takes effect at its next start (as it does for one about to move).
	o.needReboot = running && !want.Stopped && !migrationAsked && want.AllowReboot && len(o.pendingKeys) > 0 && !rebootUnderway(cr)
	cr.Status.PendingChanges = o.pendingKeys

	e.observeAgent(ctx, cr, o)
	guest.FillStatus(&cr.Status.Status, o.ref, o.running, row)
	guest.Readiness{
		Manage: manage, Converged: o.converged(), WasReady: o.wasReady, Busy: o.busy(),
		PowerDrift: o.powerDrift(), Settling: rebootUnderway(cr), LastTask: cr.Status.LastTask,
	}.Set(cr)

	// Nothing can change while PVE works on the guest.
	upToDate := o.busy() || (o.converged() && len(o.plan.Refused) == 0)
	return managed.ExternalObservation{
		ResourceExists:    true,
		ResourceUpToDate:  upToDate,
		ConnectionDetails: connectionDetails(cr, o),
		Diff:              strings.Join(o.plan.Fields, ","),
	}, nil
}

// refreshTask follows the last task we started while it runs.
func (e *external) refreshTask(ctx context.Context, cr *v1alpha1.VirtualMachine, o *observation) error {
	running, err := guest.RefreshTask(ctx, e.cl, e.record, cr, cr.Status.LastTask)
	o.taskRunning = running
	return err
}

// qemuPowerTasks are the tasks after which a QEMU guest's power state is
// still settling.
var qemuPowerTasks = guest.PowerTasks(pve.QEMU)

func rebootUnderway(cr *v1alpha1.VirtualMachine) bool {
	return guest.TaskUnderwayOfType(cr.Status.LastTask, qemuPowerTasks...)
}

// pendingKeys lists what waits for a reboot: keys PVE holds pending, plus
// cloud-init changes on a running guest (never in /pending; PVE's
// /cloudinit knows), asked only while status says some were made.
func (e *external) pendingKeys(ctx context.Context, cr *v1alpha1.VirtualMachine, o *observation) []string {
	keys := o.cfg.PendingKeys()
	if !o.running || !hasCloudInitKey(cr.Status.PendingChanges) {
		return keys
	}
	ci, err := e.cl.CloudInitPending(ctx, o.ref)
	if err != nil {
		// An older PVE without /cloudinit: keep what we recorded.
		return guest.MergeKeys(keys, cr.Status.PendingChanges)
	}
	return guest.MergeKeys(keys, ci)
}

func hasCloudInitKey(keys []string) bool {
	for _, k := range keys {
		if pve.IsCloudInitKey(k) {
			return true
		}
	}
	return false
}

// observeAgent asks the guest agent for the IP and OS while they are
// unknown (throttled), and forgets them when the guest stops.
func (e *external) observeAgent(ctx context.Context, cr *v1alpha1.VirtualMachine, o *observation) {
	st := &cr.Status.Status
	if !o.running {
		st.IPAddress = ""
		return
	}
	if st.IPAddress != "" || !pve.AgentEnabled(o.cfg) || !e.agentAsked.Due(cr.GetUID(), time.Now(), agentRetry) {
		return
	}
	ifs, err := e.cl.AgentNetworkInterfaces(ctx, o.ref)
	if err != nil {
		return
	}
	st.IPAddress = pve.FirstIPv4(ifs)
	if st.OSInfo == "" {
		if osName, err := e.cl.AgentOSInfo(ctx, o.ref); err == nil {
			st.OSInfo = osName
		}
	}
}

// connectionDetails publishes how to reach the VM; never a Proxmox
// credential.
func connectionDetails(cr *v1alpha1.VirtualMachine, o *observation) managed.ConnectionDetails {
	cd := managed.ConnectionDetails{
		guest.ConnectionDetailVMID: []byte(strconv.Itoa(o.ref.VMID)),
		guest.ConnectionDetailNode: []byte(o.ref.Node),
	}
	if n, ok := o.cfg.Effective("name"); ok {
		cd[guest.ConnectionDetailName] = []byte(n)
	}
	if ip := cr.Status.Status.IPAddress; ip != "" {
		cd[guest.ConnectionDetailIPAddress] = []byte(ip)
		cd[guest.ConnectionDetailEndpoint] = []byte(ip)
	}
	if o.want.User != "" {
		cd[guest.ConnectionDetailUsername] = []byte(o.want.User)
	}
	if o.want.Password != nil {
		cd[guest.ConnectionDetailPassword] = []byte(o.want.Password.Value)
	}
	return cd
}
