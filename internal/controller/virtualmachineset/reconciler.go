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

package virtualmachineset

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
)

// Conditions of a set besides Ready.
const (
	// TypeScaleDownBlocked: a protected VM stops a scale-down.
	TypeScaleDownBlocked xpv2.ConditionType = "ScaleDownBlocked"
	// TypePCIDevicesShort: dedicated mode has fewer devices than replicas.
	TypePCIDevicesShort xpv2.ConditionType = "PCIDevicesShort"
)

// Events.
const (
	reasonCreated      event.Reason = "CreatedVM"
	reasonAdopted      event.Reason = "AdoptedVM"
	reasonUpdated      event.Reason = "UpdatedVM"
	reasonDeleted      event.Reason = "DeletedVM"
	reasonBlocked      event.Reason = "ScaleDownBlocked"
	reasonNotAdoptable event.Reason = "VMNotAdoptable"
)

// Reconciler keeps VirtualMachineSets.
type Reconciler struct {
	kube client.Client
	// fresh reads Namespaces, for the connection's allowedNamespaces.
	fresh   client.Reader
	record  event.Recorder
	changes changelog.Recorder
	// clients are the connections' Proxmox clients, read to place VMs.
	clients *pve.Cache
}

// Reconcile creates the missing replicas, brings existing ones to the set's
// template in place, removes replicas beyond spec.replicas (highest index
// first, stopping at a protected one) and reports counts and conditions.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	set := &v1alpha1.VirtualMachineSet{}
	if err := r.kube.Get(ctx, req.NamespacedName, set); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if meta.WasDeleted(set) {
		// Garbage collection deletes the VMs (or orphans them).
		return reconcile.Result{}, nil
	}
	owned, err := r.ownedVMs(ctx, set)
	if err != nil {
		return reconcile.Result{}, err
	}
	p := newPlacer(set, owned, r.clientFor(set))
	for i := range int(set.Spec.Replicas) {
		if err := r.ensureReplica(ctx, set, i, owned[i], p); err != nil {
			return reconcile.Result{}, err
		}
	}
	blocked, err := r.scaleDown(ctx, set, owned)
	if err != nil {
		return reconcile.Result{}, err
	}
	if c, ok := p.condition(); ok {
		set.Status.SetConditions(c)
	}
	res := reconcile.Result{}
	if p.none != nil {
		// A node may come online, or the template move: look again.
		res.RequeueAfter = noNodeRetry
	}
	return res, r.report(ctx, set, owned, blocked)
}

// noNodeRetry is how soon a set with a VM no allowed node could take
// looks again.
const noNodeRetry = 30 * time.Second

// ownedVMs are the set's VMs (labelled and controlled by it) by index.
func (r *Reconciler) ownedVMs(ctx context.Context, set *v1alpha1.VirtualMachineSet) (map[int]*v1alpha1.VirtualMachine, error) {
	l := &v1alpha1.VirtualMachineList{}
	if err := r.kube.List(ctx, l, client.InNamespace(set.Namespace), client.MatchingLabels{LabelSet: set.Name}); err != nil {
		return nil, errors.Wrap(err, "cannot list the set's VirtualMachines")
	}
	owned := map[int]*v1alpha1.VirtualMachine{}
	for i := range l.Items {
		vm := &l.Items[i]
		idx, ok := replicaIndex(set, vm.Name)
		if ok && metav1.IsControlledBy(vm, set) {
			owned[idx] = vm
		}
	}
	return owned, nil
}

// ensureReplica creates replica i, adopts a VM of its name that no one
// controls, or updates the one the set owns.
func (r *Reconciler) ensureReplica(ctx context.Context, set *v1alpha1.VirtualMachineSet, i int, have *v1alpha1.VirtualMachine, p *placer) error {
	if have == nil {
		return r.createOrAdopt(ctx, set, i, p)
	}
	if meta.WasDeleted(have) {
		return nil // recreated once it is gone
	}
	before := have.DeepCopy()
	applyOwned(have, set, i)
	if equality.Semantic.DeepEqual(before, have) {
		return nil
	}
	err := r.kube.Update(ctx, have)
	r.changes.Record(ctx, before, v1alpha1.VirtualMachineGroupVersionKind, changelog.Update, err, set)
	if err != nil {
		return errors.Wrapf(err, "cannot update VirtualMachine %s", have.Name)
	}
	r.record.Event(set, event.Normal(reasonUpdated, "updated "+have.Name+" to the set's template"))
	return nil
}

func (r *Reconciler) createOrAdopt(ctx context.Context, set *v1alpha1.VirtualMachineSet, i int, p *placer) error {
	existing := &v1alpha1.VirtualMachine{}
	err := r.kube.Get(ctx, types.NamespacedName{Namespace: set.Namespace, Name: vmName(set, i)}, existing)
	switch {
	case kerrors.IsNotFound(err):
		return r.create(ctx, set, i, p)
	case err != nil:
		return errors.Wrapf(err, "cannot get VirtualMachine %s", vmName(set, i))
	}
	return r.adopt(ctx, set, i, existing)
}

// create makes replica i on the node its placement picks.
func (r *Reconciler) create(ctx context.Context, set *v1alpha1.VirtualMachineSet, i int, p *placer) error {
	node, why, found, err := p.node(ctx)
	if err != nil || !found {
		return err
	}
	vm := desiredVM(set, i, node)
	if err := controllerutil.SetControllerReference(set, vm, r.kube.Scheme()); err != nil {
		return errors.Wrap(err, "cannot own the VirtualMachine")
	}
	err = r.kube.Create(ctx, vm)
	if kerrors.IsAlreadyExists(err) {
		return nil // made by an earlier reconcile whose VM the cache did not hold yet
	}
	r.changes.Record(ctx, vm, v1alpha1.VirtualMachineGroupVersionKind, changelog.Create, err, set)
	if err != nil {
		return errors.Wrapf(err, "cannot create VirtualMachine %s", vm.Name)
	}
	msg := "created " + vm.Name
	if why != "" {
		msg += " on node " + node + ": " + why
	}
	r.record.Event(set, event.Normal(reasonCreated, msg))
	return nil
}

// adopt takes a VM of replica i's name that no one controls (kubemox's,
// say) as it is: its external name keeps pointing at its guest.
func (r *Reconciler) adopt(ctx context.Context, set *v1alpha1.VirtualMachineSet, i int, existing *v1alpha1.VirtualMachine) error {
	switch {
	case metav1.GetControllerOf(existing) != nil:
		r.record.Event(set, event.Warning(reasonNotAdoptable, errors.Errorf(
			"VirtualMachine %s is controlled by %s: the set cannot take it", existing.Name, metav1.GetControllerOf(existing).Name)))
		return nil
	case meta.WasDeleted(existing):
		return nil
	}
	before := existing.DeepCopy()
	applyOwned(existing, set, i)
	if err := controllerutil.SetControllerReference(set, existing, r.kube.Scheme()); err != nil {
		return errors.Wrap(err, "cannot own the VirtualMachine")
	}
	err := r.kube.Update(ctx, existing)
	r.changes.Record(ctx, before, v1alpha1.VirtualMachineGroupVersionKind, changelog.Update, err, set)
	if err != nil {
		return errors.Wrapf(err, "cannot adopt VirtualMachine %s", existing.Name)
	}
	r.record.Event(set, event.Normal(reasonAdopted, "adopted "+existing.Name))
	return nil
}

// scaleDown deletes the replicas at or beyond spec.replicas, highest index
// first. A protected set stops it at the first; that VM's name is returned.
func (r *Reconciler) scaleDown(ctx context.Context, set *v1alpha1.VirtualMachineSet, owned map[int]*v1alpha1.VirtualMachine) (string, error) {
	var surplus []int
	for i := range owned {
		if i >= int(set.Spec.Replicas) {
			surplus = append(surplus, i)
		}
	}
	slices.Sort(surplus)
	slices.Reverse(surplus)
	for _, i := range surplus {
		vm := owned[i]
		if meta.WasDeleted(vm) {
			continue
		}
		if set.Spec.DeletionProtection {
			return vm.Name, nil
		}
		if vm.Spec.DeletionProtection {
			// Protected when the set was: unprotect it first, or deleting the
			// resource would leave its guest behind in Proxmox VE.
			vm.Spec.DeletionProtection = false
			if err := r.kube.Update(ctx, vm); err != nil {
				return "", errors.Wrapf(err, "cannot unprotect VirtualMachine %s before deleting it", vm.Name)
			}
		}
		err := r.kube.Delete(ctx, vm, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if kerrors.IsNotFound(err) {
			continue
		}
		r.changes.Record(ctx, vm, v1alpha1.VirtualMachineGroupVersionKind, changelog.Delete, err, set)
		if err != nil {
			return "", errors.Wrapf(err, "cannot delete VirtualMachine %s", vm.Name)
		}
		r.record.Event(set, event.Normal(reasonDeleted, "deleted "+vm.Name+" (scale-down)"))
	}
	return "", nil
}

// report writes status: counts, the selector, Ready, and the conditions that
// say what the set cannot do.
func (r *Reconciler) report(ctx context.Context, set *v1alpha1.VirtualMachineSet, owned map[int]*v1alpha1.VirtualMachine, blocked string) error {
	st := &set.Status
	st.Replicas, st.ReadyReplicas = 0, 0
	for _, vm := range owned {
		st.Replicas++
		if vm.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
			st.ReadyReplicas++
		}
	}
	st.Selector, st.ObservedGeneration = selector(set), set.Generation
	st.SetConditions(flag(TypeScaleDownBlocked, blocked != "", "ProtectedVM",
		fmt.Sprintf("%s has deletionProtection: the scale-down to %d stops there; unprotect it or raise replicas", blocked, set.Spec.Replicas)))
	if blocked != "" {
		r.record.Event(set, event.Warning(reasonBlocked, errors.Errorf("%s has deletionProtection: scale-down blocked", blocked)))
	}
	short := pciShortage(set)
	st.SetConditions(flag(TypePCIDevicesShort, short != "", "TooFewDevices", short))
	want := set.Spec.Replicas
	switch {
	case st.Replicas == want && st.ReadyReplicas == want:
		st.SetConditions(xpv2.Available().WithObservedGeneration(set.Generation))
	default:
		st.SetConditions(xpv2.Unavailable().WithMessage(fmt.Sprintf("%d of %d replicas exist, %d Ready", st.Replicas, want, st.ReadyReplicas)).
			WithObservedGeneration(set.Generation))
	}
	return errors.Wrap(r.kube.Status().Update(ctx, set), "cannot update the set's status")
}

// flag is a condition that is True with reason and message when on, else
// False.
func flag(t xpv2.ConditionType, on bool, reason xpv2.ConditionReason, message string) xpv2.Condition {
	c := xpv2.Condition{Type: t, Status: corev1.ConditionFalse, Reason: "None", LastTransitionTime: metav1.Now()}
	if on {
		c.Status, c.Reason, c.Message = corev1.ConditionTrue, reason, message
	}
	return c
}
