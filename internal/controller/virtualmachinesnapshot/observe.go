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

package virtualmachinesnapshot

import (
	"context"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// status.status values: "Created" is what kubemox's controller writes (its
// API comment says "created"); "Failed" its counterpart.
const (
	statusCreated = "Created"
	statusFailed  = "Failed"
)

// The snapshot kind's own refusals, for errors.Is; each is wrapped with the
// guest it is about.
var (
	// ErrGuestNotFound: the VirtualMachine or Container the snapshot names
	// does not exist, and the snapshot never saw its guest.
	ErrGuestNotFound = errors.New("not found")
	// ErrGuestGone: Proxmox VE no longer has the guest the snapshot saw.
	ErrGuestGone = errors.New("no longer exists in Proxmox VE")
	// ErrNoGuestYet: the named resource has no VMID and node yet.
	ErrNoGuestYet = errors.New("has no guest yet")
)

// Connection-detail key of the snapshot name (vmid and node are the guest
// kinds' keys).
const connectionDetailSnapshotName = "snapshotName"

// external is the client of one reconcile. Observe leaves what it saw in obs
// for Update and Delete of the same reconcile.
type external struct {
	kube   client.Client
	cl     proxmox
	record event.Recorder
	target target

	obs observation
}

// observation is what Observe learnt, for Update and Delete.
type observation struct {
	snap *pve.Snapshot
	// busy: a task of ours runs on the snapshot, or PVE marks it in work.
	busy bool
}

// Disconnect implements managed.TypedExternalClient.
func (e *external) Disconnect(context.Context) error { return nil }

// Observe implements managed.TypedExternalClient.
func (e *external) Observe(ctx context.Context, cr *v1alpha1.VirtualMachineSnapshot) (managed.ExternalObservation, error) {
	if e.target.vmGone {
		return e.guestGone(cr, errors.Errorf("%s %w in namespace %s", e.target.what, ErrGuestNotFound, cr.GetNamespace()))
	}
	ref := e.target.ref
	if ref.VMID == 0 || ref.Node == "" {
		if meta.WasDeleted(cr) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		return managed.ExternalObservation{}, errors.Errorf("%s %w: waiting for its VMID and node", e.target.what, ErrNoGuestYet)
	}
	guest.FollowCreateTask(cr, &cr.Status.LastTask)
	running, err := guest.RefreshTask(ctx, e.cl, e.record, cr, cr.Status.LastTask)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if err := e.followRollback(ctx, cr); err != nil {
		return managed.ExternalObservation{}, err
	}
	snaps, err := e.cl.Snapshots(ctx, ref)
	if pve.IsGuestNotFound(err) {
		moved, found, lerr := e.relocate(ctx)
		switch {
		case lerr != nil:
			return managed.ExternalObservation{}, lerr
		case !found:
			return e.guestGone(cr, errors.Errorf("%s (VMID %d) %w", e.target.what, ref.VMID, ErrGuestGone))
		}
		ref = moved
		snaps, err = e.cl.Snapshots(ctx, ref)
	}
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	snap := find(snaps, meta.GetExternalName(cr))
	e.obs = observation{snap: snap, busy: running || rollbackUnderway(cr) || (snap != nil && snap.SnapState != "")}
	if snap == nil {
		return e.absent(cr, running)
	}
	fillStatus(cr, ref, snap)
	if meta.WasDeleted(cr) {
		return managed.ExternalObservation{ResourceExists: true}, nil
	}
	e.setReady(cr)
	return managed.ExternalObservation{
		ResourceExists:    true,
		ResourceUpToDate:  e.obs.busy || (snap.Description == cr.Spec.Description && pendingRollback(cr) == ""),
		ConnectionDetails: connectionDetails(ref, snap.Name),
	}, nil
}

// absent reports a snapshot not (or no longer) on the guest: being made by
// our task, gone for a resource being deleted, or to be created.
func (e *external) absent(cr *v1alpha1.VirtualMachineSnapshot, createRunning bool) (managed.ExternalObservation, error) {
	if meta.WasDeleted(cr) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if createRunning {
		cr.SetConditions(xpv2.Creating().WithMessage("Proxmox VE is taking snapshot " + meta.GetExternalName(cr)))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	if guest.LastTaskFailed(cr.Status.LastTask) {
		cr.Status.Status, cr.Status.ErrorMessage = statusFailed, cr.Status.LastTask.ExitStatus
	}
	return managed.ExternalObservation{ResourceExists: false}, nil
}

// guestGone reports that the guest, and so its snapshots, are gone: for a
// resource that saw its guest, on Ready, and nothing is retried; for one
// being deleted, it is let go.
func (e *external) guestGone(cr *v1alpha1.VirtualMachineSnapshot, gone error) (managed.ExternalObservation, error) {
	if meta.WasDeleted(cr) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if cr.Status.VMID == 0 {
		return managed.ExternalObservation{}, gone
	}
	cr.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: "False", Reason: v1alpha1.ReasonVirtualMachineGone,
		Message: gone.Error() + ": Proxmox VE removed its snapshots with it", LastTransitionTime: metav1.Now(), ObservedGeneration: cr.GetGeneration()})
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// setReady: Available once the snapshot exists with nothing under way.
func (e *external) setReady(cr *v1alpha1.VirtualMachineSnapshot) {
	gen := cr.GetGeneration()
	switch {
	case rollbackUnderway(cr):
		cr.SetConditions(xpv2.Unavailable().WithMessage("rolling the guest back to this snapshot").WithObservedGeneration(gen))
	case e.obs.busy:
		cr.SetConditions(xpv2.Creating().WithMessage("Proxmox VE works on snapshot " + e.obs.snap.Name).WithObservedGeneration(gen))
	default:
		cr.SetConditions(xpv2.Available().WithObservedGeneration(gen))
	}
}

func find(snaps []pve.Snapshot, name string) *pve.Snapshot {
	for i := range snaps {
		if snaps[i].Name == name {
			return &snaps[i]
		}
	}
	return nil
}

func fillStatus(cr *v1alpha1.VirtualMachineSnapshot, ref pve.GuestRef, s *pve.Snapshot) {
	st := &cr.Status
	st.VMID = int32(ref.VMID) //nolint:gosec // a VMID PVE listed
	st.NodeName = ref.Node
	st.Parent = s.Parent
	st.VMState = s.VMState
	st.SnapTime = nil
	if !s.SnapTime.IsZero() {
		t := metav1.NewTime(s.SnapTime)
		st.SnapTime = &t
	}
	st.Status, st.ErrorMessage = statusCreated, ""
}

// connectionDetails publishes where the snapshot is; never a credential.
func connectionDetails(ref pve.GuestRef, name string) managed.ConnectionDetails {
	return managed.ConnectionDetails{
		guest.ConnectionDetailVMID:   []byte(strconv.Itoa(ref.VMID)),
		guest.ConnectionDetailNode:   []byte(ref.Node),
		connectionDetailSnapshotName: []byte(name),
	}
}

// relocate finds the guest that is not on the node we knew (migrated, or
// destroyed) through a fresh /cluster/resources read and PVE's VMID list.
// A guest PVE still has but places nowhere yet is an error, retried: never
// reported gone.
func (e *external) relocate(ctx context.Context) (pve.GuestRef, bool, error) {
	ref := e.target.ref
	id := guest.Identity{Client: e.cl, Type: ref.Type}
	loc, err := id.Locate(ctx, ref.VMID, 0, nil)
	switch {
	case err != nil:
		return ref, false, err
	case !loc.Found:
		return ref, false, nil
	case loc.Ref.Node == "" || loc.Ref.Node == ref.Node:
		return ref, true, errors.Errorf("%s (VMID %d) is not on node %s and not placed elsewhere yet: moving between nodes?", e.target.what, ref.VMID, ref.Node)
	}
	e.target.ref = loc.Ref
	return loc.Ref, true, nil
}
