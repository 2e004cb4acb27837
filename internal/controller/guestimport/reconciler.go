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

// Package guestimport brings existing Proxmox VE guests under resources: a
// GuestImport selects guests of a connection and gets a VirtualMachine per
// guest, Observe-only by default, named after the guest.
package guestimport

import (
	"context"
	"fmt"
	"strings"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/virtualmachine"
)

// LabelGuestImport names the GuestImport that created a resource. It is a
// label, not an owner reference: garbage collection must never delete a
// managed guest because its import went.
const LabelGuestImport = "proxmox.alperen.cloud/guest-import"

// retryConnection is how soon an import whose connection has no client yet
// runs again.
const retryConnection = 30 * time.Second

// maxListedGuests bounds status.guests.
const maxListedGuests = 100

// Events.
const (
	reasonImported      event.Reason = "Imported"
	reasonNoConnection  event.Reason = "ConnectionUnavailable"
	reasonImportProblem event.Reason = "ImportProblem"
)

// Reconciler runs GuestImports.
type Reconciler struct {
	kube client.Client
	// fresh reads objects the cache may not hold yet (a resource this
	// reconciler just created).
	fresh   client.Reader
	clients *pve.Cache
	record  event.Recorder
	now     func() time.Time
}

// Reconcile runs an import when it is due: never run, its spec changed, or
// its interval passed.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	gi := &v1alpha1.GuestImport{}
	if err := r.kube.Get(ctx, req.NamespacedName, gi); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if meta.WasDeleted(gi) {
		return reconcile.Result{}, nil
	}
	now := r.now()
	switch wait := untilDue(gi, now); {
	case wait < 0:
		return reconcile.Result{}, nil
	case wait > 0:
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	cl, err := r.clients.Get(gi.Spec.Connection())
	if err != nil {
		msg := fmt.Sprintf("ProxmoxConnection %q is not usable: %v", gi.Spec.Connection(), err)
		gi.Status.SetConditions(xpv2.Unavailable().WithMessage(msg))
		r.record.Event(gi, event.Warning(reasonNoConnection, errors.New(msg)))
		return reconcile.Result{RequeueAfter: retryConnection}, r.kube.Status().Update(ctx, gi)
	}
	rows, err := cl.ClusterResources(ctx)
	if err != nil {
		gi.Status.SetConditions(xpv2.Unavailable().WithMessage("cannot list the cluster's guests: " + pve.ExplainPermission(err).Error()))
		return reconcile.Result{}, errors.Join(err, r.kube.Status().Update(ctx, gi))
	}
	results := make([]v1alpha1.ImportedGuest, 0, len(rows))
	for _, row := range selected(rows, gi.Spec.Selector) {
		results = append(results, r.importGuest(ctx, gi, cl, row))
	}
	r.report(gi, results, now)
	if err := r.kube.Status().Update(ctx, gi); err != nil {
		return reconcile.Result{}, errors.Wrap(err, "cannot record the import's results")
	}
	return reconcile.Result{RequeueAfter: max(untilDue(gi, now), 0)}, nil
}

// untilDue is how long until the import should run again: 0 when it is due
// now, negative when it ran and has no interval (it runs again only when
// its spec changes).
func untilDue(gi *v1alpha1.GuestImport, now time.Time) time.Duration {
	switch {
	case gi.Status.LastRun == nil || gi.Status.ObservedGeneration != gi.Generation:
		return 0
	case gi.Spec.Interval == nil || gi.Spec.Interval.Duration <= 0:
		return -1
	default:
		return max(gi.Status.LastRun.Add(gi.Spec.Interval.Duration).Sub(now), 0)
	}
}

// importGuest decides about one selected guest and creates its resource.
func (r *Reconciler) importGuest(ctx context.Context, gi *v1alpha1.GuestImport, cl *pve.Client, row pve.Resource) v1alpha1.ImportedGuest {
	res := v1alpha1.ImportedGuest{VMID: int64(row.VMID), Name: row.Name, Node: row.Node, Type: row.Type}
	if row.Type != string(pve.QEMU) {
		return skipped(res, "importing containers needs the Container kind, which this provider version does not serve")
	}
	holders, err := guest.ClaimedBy(ctx, r.kube, &v1alpha1.VirtualMachineList{}, gi.Spec.Connection(), row.VMID)
	if err != nil {
		return failed(res, err)
	}
	if len(holders) > 0 {
		return r.alreadyHeld(ctx, gi, res, holders[0])
	}
	ref := pve.GuestRef{Type: pve.QEMU, Node: row.Node, VMID: row.VMID}
	cfg, err := cl.GuestPending(ctx, ref)
	if err != nil {
		return failed(res, pve.ExplainPermission(err))
	}
	if m, ok := guest.ParseMarker(pve.Description(cfg)); ok {
		return skipped(res, fmt.Sprintf("managed by the resource its description names (%s)", m))
	}
	return r.create(ctx, gi, res, importedVM(gi, row, cfg))
}

// alreadyHeld reports a guest a resource already names: Existing when this
// import made that resource, else Skipped.
func (r *Reconciler) alreadyHeld(ctx context.Context, gi *v1alpha1.GuestImport, res v1alpha1.ImportedGuest, holder string) v1alpha1.ImportedGuest {
	ns, name, _ := strings.Cut(holder, "/")
	vm := &v1alpha1.VirtualMachine{}
	if err := r.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, vm); err == nil && madeBy(vm, gi) {
		res.Result, res.Resource = v1alpha1.ImportResultExisting, v1alpha1.VirtualMachineKind+"/"+name
		return res
	}
	return skipped(res, "already named by VirtualMachine "+holder)
}

// create creates the resource under the guest's name, or under the name with
// the VMID appended when another object has that name. An object that
// already names this guest (a previous run whose result the cache had not
// seen yet) is the import's own: nothing is created twice.
func (r *Reconciler) create(ctx context.Context, gi *v1alpha1.GuestImport, res v1alpha1.ImportedGuest, vm *v1alpha1.VirtualMachine) v1alpha1.ImportedGuest {
	vmid := int(res.VMID)
	for _, name := range []string{resourceName(res.Name, vmid), withVMID(resourceName(res.Name, vmid), vmid)} {
		vm.Name = name
		err := r.kube.Create(ctx, vm)
		if err == nil {
			res.Result, res.Resource = v1alpha1.ImportResultImported, v1alpha1.VirtualMachineKind+"/"+name
			return res
		}
		if !kerrors.IsAlreadyExists(err) {
			return failed(res, errors.Wrapf(err, "cannot create VirtualMachine %s", name))
		}
		existing := &v1alpha1.VirtualMachine{}
		if err := r.fresh.Get(ctx, types.NamespacedName{Namespace: gi.Namespace, Name: name}, existing); err == nil && sameGuest(existing, vm) {
			res.Result, res.Resource = v1alpha1.ImportResultExisting, v1alpha1.VirtualMachineKind+"/"+name
			return res
		}
	}
	return failed(res, errors.Errorf("the names %s and %s are taken by other VirtualMachines", resourceName(res.Name, vmid), withVMID(resourceName(res.Name, vmid), vmid)))
}

// importedVM is the resource for a guest: its VMID as external name, the
// import's policies, and a spec describing the guest as it is, so that full
// management later writes nothing but the ownership marker. A stopped guest
// is not started (enableAutoStart follows its power state).
func importedVM(gi *v1alpha1.GuestImport, row pve.Resource, cfg pve.GuestConfig) *v1alpha1.VirtualMachine {
	spec := pve.ImportedSpec(cfg)
	running := row.Status == "running"
	vm := &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: gi.Namespace, Labels: map[string]string{LabelGuestImport: gi.Name}},
		Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: v1alpha1.ResourceSpec{
				ConnectionRef:      &v1alpha1.ConnectionReference{Name: gi.Spec.Connection()},
				ManagementPolicies: append(xpv2.ManagementPolicies{}, gi.Spec.ManagementPolicies...),
			},
			Name:            spec.Name,
			NodeName:        row.Node,
			VMSpec:          &v1alpha1.VirtualMachineScratchSpec{VirtualMachineHardware: virtualmachine.ImportedHardware(spec)},
			EnableAutoStart: &running,
		},
	}
	meta.SetExternalName(vm, fmt.Sprint(row.VMID))
	return vm
}

func madeBy(vm *v1alpha1.VirtualMachine, gi *v1alpha1.GuestImport) bool {
	return vm.Namespace == gi.Namespace && vm.Labels[LabelGuestImport] == gi.Name
}

func sameGuest(a, b *v1alpha1.VirtualMachine) bool {
	return meta.GetExternalName(a) == meta.GetExternalName(b) &&
		a.GetProviderConfigReference().Name == b.GetProviderConfigReference().Name
}

func skipped(res v1alpha1.ImportedGuest, reason string) v1alpha1.ImportedGuest {
	res.Result, res.Reason = v1alpha1.ImportResultSkipped, reason
	return res
}

func failed(res v1alpha1.ImportedGuest, err error) v1alpha1.ImportedGuest {
	res.Result, res.Reason = v1alpha1.ImportResultFailed, err.Error()
	return res
}

// report writes a run's results to status, with one event.
func (r *Reconciler) report(gi *v1alpha1.GuestImport, results []v1alpha1.ImportedGuest, now time.Time) {
	st := &gi.Status
	t := metav1.NewTime(now)
	st.LastRun, st.ObservedGeneration = &t, gi.Generation
	st.Matched = int32(len(results)) //nolint:gosec // bounded by the cluster's guests
	st.Imported, st.Existing, st.Skipped, st.Failed = 0, 0, 0, 0
	st.Guests = nil
	for _, g := range results {
		switch g.Result {
		case v1alpha1.ImportResultImported:
			st.Imported++
		case v1alpha1.ImportResultExisting:
			st.Existing++
			continue // listed by earlier runs
		case v1alpha1.ImportResultSkipped:
			st.Skipped++
		case v1alpha1.ImportResultFailed:
			st.Failed++
		}
		if len(st.Guests) < maxListedGuests {
			st.Guests = append(st.Guests, g)
		}
	}
	summary := fmt.Sprintf("matched %d guests: %d imported, %d imported before, %d skipped, %d failed",
		st.Matched, st.Imported, st.Existing, st.Skipped, st.Failed)
	if st.Failed > 0 {
		st.SetConditions(xpv2.Unavailable().WithMessage(summary))
		r.record.Event(gi, event.Warning(reasonImportProblem, errors.New(summary)))
		return
	}
	st.SetConditions(xpv2.Available().WithMessage(summary))
	r.record.Event(gi, event.Normal(reasonImported, summary))
}
