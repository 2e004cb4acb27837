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
// QEMU guest and a Container per LXC guest, Observe-only by default, named
// after the guest.
package guestimport

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
	"github.com/kubemox/provider-proxmox/internal/controller/container"
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
	changes changelog.Recorder
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
	cl, err := guest.ClientOf(ctx, guest.Readers{Kube: r.kube, Fresh: r.fresh}, r.clients, gi, gi.Spec.Connection())
	if err != nil {
		msg := fmt.Sprintf("ProxmoxConnection %q is not usable: %v", gi.Spec.Connection(), err)
		gi.Status.SetConditions(xpv2.Unavailable().WithMessage(msg))
		r.record.Event(gi, event.Warning(reasonNoConnection, errors.New(msg)))
		return reconcile.Result{RequeueAfter: retryConnection}, r.kube.Status().Update(ctx, gi)
	}
	return r.run(ctx, gi, cl, now)
}

// run imports the guests of the cluster cl reaches that gi selects, and
// records the results in its status.
func (r *Reconciler) run(ctx context.Context, gi *v1alpha1.GuestImport, cl proxmox, now time.Time) (reconcile.Result, error) {
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
func (r *Reconciler) importGuest(ctx context.Context, gi *v1alpha1.GuestImport, cl proxmox, row pve.Resource) v1alpha1.ImportedGuest {
	res := v1alpha1.ImportedGuest{VMID: int64(row.VMID), Name: row.Name, Node: row.Node, Type: row.Type}
	kind, holder, err := r.claimedBy(ctx, gi.Spec.Connection(), row.VMID)
	if err != nil {
		return failed(res, err)
	}
	if holder != "" {
		return r.alreadyHeld(ctx, gi, res, kind, holder)
	}
	ref := pve.GuestRef{Type: pve.GuestType(row.Type), Node: row.Node, VMID: row.VMID}
	cfg, err := cl.GuestPending(ctx, ref)
	if err != nil {
		return failed(res, pve.ExplainPermission(err))
	}
	if m, ok := guest.ParseMarker(pve.Description(cfg)); ok {
		return skipped(res, fmt.Sprintf("managed by the resource its description names (%s)", m))
	}
	if ref.Type == pve.LXC {
		return r.create(ctx, gi, res, importedContainer(gi, row, cfg))
	}
	return r.create(ctx, gi, res, importedVM(gi, row, cfg))
}

// claimedBy finds a resource of either guest kind, in any namespace, that
// names the guest vmid of connection: its kind and "namespace/name", or ""
// when none does. A VMID names one guest, so a VirtualMachine naming the
// VMID of a container holds it as well.
func (r *Reconciler) claimedBy(ctx context.Context, connection string, vmid int) (string, string, error) {
	lists := []struct {
		kind string
		list resource.ManagedList
	}{{v1alpha1.VirtualMachineKind, &v1alpha1.VirtualMachineList{}}, {v1alpha1.ContainerKind, &v1alpha1.ContainerList{}}}
	for _, l := range lists {
		holders, err := guest.ClaimedBy(ctx, r.kube, l.list, connection, vmid)
		if err != nil || len(holders) > 0 {
			return l.kind, strings.Join(holders, ", "), err
		}
	}
	return "", "", nil
}

// alreadyHeld reports a guest a resource already names: Existing when this
// import made that resource, else Skipped.
func (r *Reconciler) alreadyHeld(ctx context.Context, gi *v1alpha1.GuestImport, res v1alpha1.ImportedGuest, kind, holder string) v1alpha1.ImportedGuest {
	ns, name, _ := strings.Cut(holder, "/")
	obj := newOfKind(kind)
	if err := r.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj); err == nil && madeBy(obj, gi) {
		res.Result, res.Resource = v1alpha1.ImportResultExisting, kind+"/"+name
		return res
	}
	return skipped(res, "already named by "+kind+" "+holder)
}

// newOfKind is an empty resource of a guest kind.
func newOfKind(kind string) resource.Managed {
	if kind == v1alpha1.ContainerKind {
		return &v1alpha1.Container{}
	}
	return &v1alpha1.VirtualMachine{}
}

// gvkOf is the GroupVersionKind of a guest resource kind.
func gvkOf(kind string) schema.GroupVersionKind {
	if kind == v1alpha1.ContainerKind {
		return v1alpha1.ContainerGroupVersionKind
	}
	return v1alpha1.VirtualMachineGroupVersionKind
}

// kindOf is the kind of a guest resource.
func kindOf(mg resource.Managed) string {
	if _, ok := mg.(*v1alpha1.Container); ok {
		return v1alpha1.ContainerKind
	}
	return v1alpha1.VirtualMachineKind
}

// create creates the resource under the guest's name, or under the name with
// the VMID appended when another object has that name. An object that
// already names this guest (a previous run whose result the cache had not
// seen yet) is the import's own: nothing is created twice.
func (r *Reconciler) create(ctx context.Context, gi *v1alpha1.GuestImport, res v1alpha1.ImportedGuest, mg resource.Managed) v1alpha1.ImportedGuest {
	vmid, kind := int(res.VMID), kindOf(mg)
	for _, name := range []string{resourceName(res.Name, vmid), withVMID(resourceName(res.Name, vmid), vmid)} {
		mg.SetName(name)
		err := r.kube.Create(ctx, mg)
		if !kerrors.IsAlreadyExists(err) {
			r.changes.Record(ctx, mg, gvkOf(kind), changelog.Create, err, gi)
		}
		if err == nil {
			res.Result, res.Resource = v1alpha1.ImportResultImported, kind+"/"+name
			return res
		}
		if !kerrors.IsAlreadyExists(err) {
			return failed(res, errors.Wrapf(err, "cannot create %s %s", kind, name))
		}
		existing := newOfKind(kind)
		if err := r.fresh.Get(ctx, types.NamespacedName{Namespace: gi.Namespace, Name: name}, existing); err == nil && sameGuest(existing, mg) {
			res.Result, res.Resource = v1alpha1.ImportResultExisting, kind+"/"+name
			return res
		}
	}
	return failed(res, errors.Errorf("the names %s and %s are taken by other %ss", resourceName(res.Name, vmid), withVMID(resourceName(res.Name, vmid), vmid), kind))
}

// importedVM is the resource for a guest: its VMID as external name, the
// import's policies, and a spec describing the guest as it is, so that full
// management later writes nothing but the ownership marker. A stopped guest
// is not started (enableAutoStart follows its power state).
func importedVM(gi *v1alpha1.GuestImport, row pve.Resource, cfg pve.GuestConfig) *v1alpha1.VirtualMachine {
	spec := pve.ImportedSpec(cfg)
	running := row.Status == "running"
	vm := &v1alpha1.VirtualMachine{
		ObjectMeta: importedMeta(gi),
		Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: v1alpha1.ResourceSpec{
				ConnectionRef:      &v1alpha1.ConnectionReference{Name: gi.Spec.Connection()},
				ManagementPolicies: append(xpv2.ManagementPolicies{}, gi.Spec.ManagementPolicies...),
			},
			NodeName:        row.Node,
			EnableAutoStart: &running,
		},
	}
	virtualmachine.Imported(spec, &vm.Spec)
	meta.SetExternalName(vm, fmt.Sprint(row.VMID))
	return vm
}

// importedContainer is the resource for an LXC guest, as importedVM. PVE
// keeps no record of the template or image a container came from, so the
// spec names no source and the provider can never create it: an import
// asking for full management gives it every policy but Create and Delete
// (containerManaged).
func importedContainer(gi *v1alpha1.GuestImport, row pve.Resource, cfg pve.GuestConfig) *v1alpha1.Container {
	spec := pve.ImportedLXCSpec(cfg)
	running := row.Status == "running"
	policies := append(xpv2.ManagementPolicies{}, gi.Spec.ManagementPolicies...)
	if slices.Contains(policies, xpv2.ManagementActionAll) {
		policies = append(xpv2.ManagementPolicies{}, containerManaged...)
	}
	ct := &v1alpha1.Container{
		ObjectMeta: importedMeta(gi),
		Spec: v1alpha1.ContainerSpec{
			ResourceSpec: v1alpha1.ResourceSpec{
				ConnectionRef:      &v1alpha1.ConnectionReference{Name: gi.Spec.Connection()},
				ManagementPolicies: policies,
			},
			NodeName:        row.Node,
			EnableAutoStart: &running,
		},
	}
	container.Imported(spec, &ct.Spec)
	meta.SetExternalName(ct, fmt.Sprint(row.VMID))
	return ct
}

// containerManaged are the management policies of an imported container
// under full management: observed and updated, never created (it has no
// source) nor deleted with its resource.
var containerManaged = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}

// importedMeta labels a resource with the import that made it (no owner
// reference).
func importedMeta(gi *v1alpha1.GuestImport) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: gi.Namespace, Labels: map[string]string{LabelGuestImport: gi.Name}}
}

func madeBy(o metav1.Object, gi *v1alpha1.GuestImport) bool {
	return o.GetNamespace() == gi.Namespace && o.GetLabels()[LabelGuestImport] == gi.Name
}

func sameGuest(a, b resource.Managed) bool {
	return meta.GetExternalName(a) == meta.GetExternalName(b) && connectionOf(a) == connectionOf(b)
}

// connectionOf is the connection a guest resource names.
func connectionOf(mg resource.Managed) string {
	if m, ok := mg.(resource.ModernManaged); ok && m.GetProviderConfigReference() != nil {
		return m.GetProviderConfigReference().Name
	}
	return ""
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
