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

// ownership is Observe's verdict on the guest at the resource's VMID.
type ownership int

const (
	// ownMine: our marker with this resource's UID.
	ownMine ownership = iota
	// ownMineNewUID: our marker for this namespace/name, another UID (the
	// object was restored or moved): adopt and rewrite the UID.
	ownMineNewUID
	// ownInProgress: locked create/clone and no marker yet.
	ownInProgress
	// ownImported: no marker, and the user set the external name.
	ownImported
	// ownLostRace: not ours, and we picked the VMID: pick another.
	ownLostRace
	// ownConflict: not ours and we cannot safely forget the VMID.
	ownConflict
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
	own         ownership
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
	needReboot  bool
	pendingKeys []string
	// current is status/current as read earlier in this reconcile, if it
	// was: Update acts on it rather than asking PVE again.
	current *pve.GuestStatus
}

// guestStatus returns status/current, read at most once per reconcile.
func (e *external) guestStatus(ctx context.Context, o *observation) (pve.GuestStatus, error) {
	if o.current != nil {
		return *o.current, nil
	}
	st, err := e.cl.GuestStatus(ctx, o.ref)
	if err != nil {
		return st, err
	}
	o.current = &st
	return st, nil
}

// Disconnect implements managed.TypedExternalClient.
func (e *external) Disconnect(context.Context) error { return nil }

// busy reports whether PVE works on the guest (a lock or our task).
func (o *observation) busy() bool { return o.locked != "" || o.taskRunning }

// actionable reports whether Update and Delete may act on what Observe saw:
// an owned guest placed on a node, with nothing under way.
func (o *observation) actionable() bool {
	return o != nil && o.ref.Node != "" && o.own != ownInProgress && !o.busy()
}

// converged reports whether the guest needs no change (refusals aside).
func (o *observation) converged() bool {
	return o.plan.Empty() && !o.needMarker && !o.needPass && !o.needStart && !o.needReboot
}

func markerOf(cr *v1alpha1.VirtualMachine) marker {
	return marker{Namespace: cr.GetNamespace(), Name: cr.GetName(), UID: string(cr.GetUID())}
}

// userSetExternalName reports whether the external name came from a user:
// we only ever write it inside Create, after the reconciler wrote the
// create-pending annotation.
func userSetExternalName(cr *v1alpha1.VirtualMachine) bool {
	_, pending := cr.GetAnnotations()[meta.AnnotationKeyExternalCreatePending]
	return meta.GetExternalName(cr) != "" && !pending
}

// mayUpdate reports whether the policies let the provider change the guest.
func mayUpdate(cr *v1alpha1.VirtualMachine) bool {
	for _, a := range cr.GetManagementPolicies() {
		if a == xpv2.ManagementActionAll || a == xpv2.ManagementActionUpdate {
			return true
		}
	}
	return false
}

// decide applies the ownership rules of doc.go.
func decide(cr *v1alpha1.VirtualMachine, vmid int, lock, description string) ownership {
	me := markerOf(cr)
	m, has := parseMarker(description)
	switch {
	case has && m == me:
		return ownMine
	case has && m.sameObject(me):
		return ownMineNewUID
	case !has && (lock == "clone" || lock == "create"):
		return ownInProgress
	case userSetExternalName(cr) && !has:
		return ownImported
	case userSetExternalName(cr):
		return ownConflict
	case int(cr.Status.VMID) == vmid:
		// We saw our marker here before: it vanished (edited away). Never
		// risk a second guest by forgetting the VMID.
		return ownConflict
	}
	return ownLostRace
}

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
	vmid, ok := vmidOf(name)
	if !ok {
		return managed.ExternalObservation{}, errors.Errorf("external name %q is not a VMID", name)
	}
	if meta.WasDeleted(cr) && cr.Spec.DeletionProtection {
		// The guest stays; for the reconciler it is gone, so the resource
		// can go.
		e.record.Event(cr, event.Normal("DeletionProtection", "deletionProtection is set: VM "+name+" is kept in Proxmox VE"))
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	o := &observation{wasReady: guest.IsReady(cr), specChanged: cr.GetCondition(xpv2.TypeSynced).ObservedGeneration != cr.GetGeneration()}
	e.obs = o

	ref, row, found, err := e.locate(ctx, cr, vmid)
	if err != nil || !found {
		return managed.ExternalObservation{ResourceExists: found && err == nil}, err
	}
	o.ref = ref
	if row != nil && row.Type != "" && row.Type != "qemu" {
		return e.notQEMU(ctx, cr, vmid, row.Type)
	}
	if ref.Node == "" {
		// Taken cluster-wide but not placed yet in our view: wait.
		cr.SetConditions(xpv2.Creating())
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	cfg, err := e.cl.GuestPending(ctx, ref)
	if pve.IsGuestNotFound(err) {
		return e.vanished(ctx, cr, vmid)
	}
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	o.cfg = cfg
	o.locked = pve.Lock(cfg)
	if o.locked == "" && row != nil {
		o.locked = row.Lock
	}
	o.own = decide(cr, vmid, o.locked, pve.Description(cfg))
	if o.own == ownLostRace && o.locked == "" {
		// Forgetting the VMID is the one irreversible verdict: confirm the
		// guest is not our clone still in progress with status/current,
		// which always carries the lock.
		st, err := e.cl.GuestStatus(ctx, ref)
		if err != nil && !pve.IsGuestNotFound(err) {
			return managed.ExternalObservation{}, err
		}
		o.locked = st.Lock
		o.own = decide(cr, vmid, o.locked, pve.Description(cfg))
	}
	switch o.own {
	case ownInProgress:
		cr.SetConditions(xpv2.Creating().WithMessage("Proxmox VE is creating VM " + name))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	case ownLostRace:
		return e.lostRace(ctx, cr, vmid)
	case ownConflict:
		if meta.WasDeleted(cr) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		return managed.ExternalObservation{}, errors.Errorf("VM %d does not carry this resource's marker (%q): refusing to manage or recreate it", vmid, markerOf(cr).String())
	case ownMine, ownMineNewUID:
		cr.Status.VMID = int32(vmid) //nolint:gosec // vmidOf bounds it
	case ownImported:
		// The user's external name is the VMID; the guest is observed below like
		// our own and gets our marker when updates are allowed (needMarker).
	}
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
	running, err := e.powerState(ctx, o, row, want.Running)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	o.running = running
	manage := mayUpdate(cr)
	o.plan = pve.Diff(want.Spec, o.cfg)
	o.needMarker = manage && (o.own == ownMineNewUID || o.own == ownImported)
	o.needPass = passwordNeedsApply(cr, want.Password)
	o.pendingKeys = e.pendingKeys(ctx, cr, o)
	o.needStart = want.Running && !running && !rebootUnderway(cr)
	o.needReboot = running && want.AllowReboot && len(o.pendingKeys) > 0 && !rebootUnderway(cr)
	cr.Status.PendingChanges = o.pendingKeys

	e.observeAgent(ctx, cr, o)
	e.fillStatus(cr, o, row)
	e.setReady(cr, o, manage)

	// Nothing can change while PVE works on the guest.
	upToDate := o.busy() || (o.converged() && len(o.plan.Refused) == 0)
	return managed.ExternalObservation{
		ResourceExists:    true,
		ResourceUpToDate:  upToDate,
		ConnectionDetails: connectionDetails(cr, o),
		Diff:              strings.Join(o.plan.Fields, ","),
	}, nil
}

// notQEMU handles a container (or other guest) at the VMID: a race lost if
// we picked the VMID, a user error otherwise.
func (e *external) notQEMU(ctx context.Context, cr *v1alpha1.VirtualMachine, vmid int, kind string) (managed.ExternalObservation, error) {
	if !userSetExternalName(cr) && int(cr.Status.VMID) != vmid {
		return e.lostRace(ctx, cr, vmid)
	}
	if meta.WasDeleted(cr) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	return managed.ExternalObservation{}, errors.Errorf("VMID %d is a %s guest, not a QEMU VM", vmid, kind)
}

// locate finds the node of vmid: the connection's /cluster/resources view
// first, then, for a VMID missing from that lagging listing, direct reads.
// found with an empty node means "taken in PVE, place unknown yet".
func (e *external) locate(ctx context.Context, cr *v1alpha1.VirtualMachine, vmid int) (pve.GuestRef, *pve.Resource, bool, error) {
	// A deletion reads a fresh listing and keeps no clock (Observe forgot it).
	settled := !meta.WasDeleted(cr) && guest.IsReady(cr) && !guest.TaskUnderway(cr.Status.LastTask)
	maxAge := e.observed.ListingAge(cr.GetUID(), settled, e.steadyAge, time.Now())
	rows, err := e.cl.CachedClusterResources(ctx, maxAge)
	if err != nil {
		return pve.GuestRef{}, nil, false, err
	}
	for i := range rows {
		if rows[i].VMID != vmid {
			continue
		}
		return pve.GuestRef{Node: rows[i].Node, VMID: vmid}, &rows[i], true, nil
	}
	return e.confirm(ctx, cr, vmid)
}

// confirm checks a VMID the listing does not show: on the node we expect,
// then in PVE's cluster-wide VMID list, before calling it absent.
func (e *external) confirm(ctx context.Context, cr *v1alpha1.VirtualMachine, vmid int) (pve.GuestRef, *pve.Resource, bool, error) {
	for _, node := range candidateNodes(cr) {
		ref := pve.GuestRef{Node: node, VMID: vmid}
		st, err := e.cl.GuestStatus(ctx, ref)
		if err == nil {
			if e.obs != nil {
				e.obs.current = &st // the guest found is the one this reconcile observes
			}
			return ref, nil, true, nil
		}
		if !pve.IsGuestNotFound(err) {
			return pve.GuestRef{}, nil, false, err
		}
	}
	inUse, err := e.cl.VMIDInUse(ctx, vmid)
	if err != nil {
		return pve.GuestRef{}, nil, false, err
	}
	return pve.GuestRef{VMID: vmid}, nil, inUse, nil
}

func candidateNodes(cr *v1alpha1.VirtualMachine) []string {
	var nodes []string
	if n := cr.Status.Status.Node; n != "" {
		nodes = append(nodes, n)
	}
	if n := cr.Spec.NodeName; n != "" && (len(nodes) == 0 || nodes[0] != n) {
		nodes = append(nodes, n)
	}
	return nodes
}

// vanished handles a guest the listing showed but its node no longer has:
// migrated, or destroyed. Only PVE's VMID list can tell.
func (e *external) vanished(ctx context.Context, cr *v1alpha1.VirtualMachine, vmid int) (managed.ExternalObservation, error) {
	inUse, err := e.cl.VMIDInUse(ctx, vmid)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if inUse {
		cr.SetConditions(xpv2.Unavailable().WithMessage("VM " + strconv.Itoa(vmid) + " is moving between nodes"))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	return managed.ExternalObservation{ResourceExists: false}, nil
}

// lostRace forgets a VMID someone else's guest took before ours was made,
// persisting that at once (Observe persists only status otherwise), so the
// next Create picks another VMID.
func (e *external) lostRace(ctx context.Context, cr *v1alpha1.VirtualMachine, vmid int) (managed.ExternalObservation, error) {
	if meta.WasDeleted(cr) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	e.record.Event(cr, event.Normal("VMIDTaken", "VMID "+strconv.Itoa(vmid)+" was taken by another guest before ours was created; picking another"))
	forgetExternalName(cr)
	if err := e.kube.Update(ctx, cr); err != nil {
		return managed.ExternalObservation{}, errors.Wrap(err, "cannot forget a VMID taken by another guest")
	}
	return managed.ExternalObservation{ResourceExists: false}, nil
}

// refreshTask follows the last task we started while it runs.
func (e *external) refreshTask(ctx context.Context, cr *v1alpha1.VirtualMachine, o *observation) error {
	running, err := guest.RefreshTask(ctx, e.cl, e.record, cr, cr.Status.LastTask)
	o.taskRunning = running
	return err
}

// qemuPowerTasks are the tasks after which a QEMU guest's power state is
// still settling.
var qemuPowerTasks = []string{"qmreboot", "qmshutdown", "qmstop"}

func rebootUnderway(cr *v1alpha1.VirtualMachine) bool {
	return guest.TaskUnderwayOfType(cr.Status.LastTask, qemuPowerTasks...)
}

// powerState reads whether the guest runs: from the listing when it knows
// and agrees with the spec, else from status/current (a new guest lists as
// "unknown", and the listing may predate our own start).
func (e *external) powerState(ctx context.Context, o *observation, row *pve.Resource, wantRunning bool) (bool, error) {
	if row != nil && (row.Status == "running" || (row.Status == "stopped" && !wantRunning)) {
		return row.Status == "running", nil
	}
	st, err := e.guestStatus(ctx, o)
	if err != nil {
		return false, err
	}
	return st.Running(), nil
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
		return mergeKeys(keys, cr.Status.PendingChanges)
	}
	return mergeKeys(keys, ci)
}

func hasCloudInitKey(keys []string) bool {
	for _, k := range keys {
		if pve.IsCloudInitKey(k) {
			return true
		}
	}
	return false
}

func mergeKeys(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range append(append([]string(nil), a...), b...) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
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

func (e *external) fillStatus(cr *v1alpha1.VirtualMachine, o *observation, row *pve.Resource) {
	st := &cr.Status.Status
	st.ID = int32(o.ref.VMID) //nolint:gosec // bounded by vmidOf
	st.Node = o.ref.Node
	st.State = "stopped"
	if o.running {
		st.State = "running"
	}
	// o.running is at least as fresh as the lagging listing, so the listing
	// only adds states that running/stopped cannot express.
	if row != nil && !isPlainPowerState(row.Status) {
		st.State = row.Status
	}
	st.Uptime = ""
	if o.running && row != nil && row.Uptime > 0 {
		st.Uptime = (time.Duration(row.Uptime) * time.Second).String()
	}
}

func isPlainPowerState(s string) bool {
	return s == "" || s == "unknown" || s == "running" || s == "stopped"
}

// setReady decides the Ready condition. Before the first Ready the guest
// must have converged (config, password, power); afterwards drift being
// corrected does not flip it, only a lock, a task, a stopped guest that
// should run, or a failed task.
func (e *external) setReady(cr *v1alpha1.VirtualMachine, o *observation, manage bool) {
	converged := o.converged()
	// A failed task matters while what it was for is still not done.
	if lt := cr.Status.LastTask; manage && !converged && guest.LastTaskFailed(lt) {
		cr.SetConditions(xpv2.Unavailable().WithMessage("Proxmox VE task " + lt.Type + " failed: " + lt.ExitStatus).WithObservedGeneration(cr.GetGeneration()))
		return
	}
	busy := o.busy()
	var ready bool
	switch {
	case !manage:
		ready = !busy
	case o.wasReady:
		ready = !busy && !o.needStart
	default:
		ready = !busy && converged && !rebootUnderway(cr)
	}
	gen := cr.GetGeneration()
	switch {
	case ready:
		cr.SetConditions(xpv2.Available().WithObservedGeneration(gen))
	case o.wasReady:
		cr.SetConditions(xpv2.Unavailable().WithObservedGeneration(gen))
	default:
		cr.SetConditions(xpv2.Creating().WithObservedGeneration(gen))
	}
}

// connectionDetails publishes how to reach the VM; never a Proxmox
// credential.
func connectionDetails(cr *v1alpha1.VirtualMachine, o *observation) managed.ConnectionDetails {
	cd := managed.ConnectionDetails{
		"vmid": []byte(strconv.Itoa(o.ref.VMID)),
		"node": []byte(o.ref.Node),
	}
	if n, ok := o.cfg.Effective("name"); ok {
		cd["name"] = []byte(n)
	}
	if ip := cr.Status.Status.IPAddress; ip != "" {
		cd["ipAddress"] = []byte(ip)
		cd["endpoint"] = []byte(ip)
	}
	if o.want.User != "" {
		cd["username"] = []byte(o.want.User)
	}
	if o.want.Password != nil {
		cd["password"] = []byte(o.want.Password.Value)
	}
	return cd
}
