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

package snapshotpolicy

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
	"github.com/kubemox/provider-proxmox/internal/controller/polling"
	"github.com/kubemox/provider-proxmox/internal/controller/statusmetrics"
	"github.com/kubemox/provider-proxmox/internal/metrics"
)

// AnnotationScheduledAt is the run (RFC 3339) a policy's snapshot was taken
// for; retention orders snapshots by it.
const AnnotationScheduledAt = "proxmox.alperen.cloud/scheduled-at"

// finalizer holds a policy whose snapshots are to be deleted with it.
const finalizer = "proxmox.alperen.cloud/snapshot-policy"

// Event reasons of the policy.
const (
	reasonSnapshotsTaken  event.Reason = "SnapshotsTaken"
	reasonSnapshotsPruned event.Reason = "SnapshotsPruned"
)

// Reconciler runs VirtualMachineSnapshotPolicies. Every decision is made
// from the policy's status and the clock, never from memory, so a restart
// changes nothing.
type Reconciler struct {
	kube    client.Client
	clock   clock.PassiveClock
	record  event.Recorder
	changes changelog.Recorder
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := &v1alpha1.VirtualMachineSnapshotPolicy{}
	if err := r.kube.Get(ctx, req.NamespacedName, p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.finalize(ctx, p)
	}
	if err := r.holdFinalizer(ctx, p); err != nil {
		return reconcile.Result{}, err
	}
	now := r.clock.Now()
	wait := r.step(ctx, p, now)
	p.Status.ObservedGeneration = p.Generation
	if err := r.kube.Status().Update(ctx, p); err != nil {
		return reconcile.Result{}, errors.Wrap(err, "cannot update the policy's status")
	}
	return reconcile.Result{RequeueAfter: wait}, nil
}

// step runs what is due at now and returns how long until the next run (0:
// nothing scheduled).
func (r *Reconciler) step(ctx context.Context, p *v1alpha1.VirtualMachineSnapshotPolicy, now time.Time) time.Duration {
	sched, err := scheduleOf(&p.Spec)
	if err != nil {
		p.Status.NextRunTime = nil
		p.Status.SetConditions(notReady(v1alpha1.ReasonInvalidSchedule, err.Error()))
		return 0
	}
	if p.Spec.Suspend {
		// A resumed policy starts from the next slot; runs missed while
		// suspended are not made up.
		p.Status.NextRunTime = nil
		p.Status.SetConditions(notReady(v1alpha1.ReasonSuspended, "spec.suspend stops the schedule; the snapshots taken are kept"))
		return 0
	}
	next := nextRun(p, sched, now)
	var failures map[string]error
	if !now.Before(next) {
		slot := latestDue(sched, next, now)
		failures = r.run(ctx, p, slot)
		p.Status.LastRunTime = &metav1.Time{Time: slot}
		next = sched.Next(now)
	}
	for k, v := range r.prune(ctx, p, now) {
		if failures == nil {
			failures = map[string]error{}
		}
		failures[k] = v
	}
	if failures != nil {
		setFailures(p, failures)
	}
	p.Status.NextRunTime = &metav1.Time{Time: next}
	p.Status.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: "True", Reason: v1alpha1.ReasonScheduled, LastTransitionTime: metav1.Now()})
	return next.Sub(now)
}

// nextRun is status.nextRunTime, computed afresh from now for a new policy,
// a changed spec or a resumed one.
func nextRun(p *v1alpha1.VirtualMachineSnapshotPolicy, sched interface{ Next(time.Time) time.Time }, now time.Time) time.Time {
	if p.Status.NextRunTime != nil && p.Status.ObservedGeneration == p.Generation {
		return p.Status.NextRunTime.Time
	}
	return sched.Next(now)
}

func notReady(reason xpv2.ConditionReason, msg string) xpv2.Condition {
	return xpv2.Condition{Type: xpv2.TypeReady, Status: "False", Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

// run snapshots every selected VM for slot and returns the failures by
// namespace/name. Snapshot names derive from the slot, so a run repeated
// after a crash finds its snapshots made and makes no second one.
func (r *Reconciler) run(ctx context.Context, p *v1alpha1.VirtualMachineSnapshotPolicy, slot time.Time) map[string]error {
	failures := map[string]error{}
	vms, err := r.selected(ctx, p)
	if err != nil {
		failures[p.Namespace+"/"+p.Name] = err
		return failures
	}
	taken := 0
	for i := range vms {
		created, err := r.snapshot(ctx, p, &vms[i], slot)
		if err != nil {
			failures[vms[i].Namespace+"/"+vms[i].Name] = err
			continue
		}
		if created {
			taken++
		}
	}
	p.Status.SnapshotsTaken += int64(taken)
	if taken > 0 {
		r.record.Event(p, event.Normal(reasonSnapshotsTaken, "took "+strconv.Itoa(taken)+" snapshots for the run of "+slot.UTC().Format(time.RFC3339)))
	}
	return failures
}

// selected lists the VirtualMachines the policy selects: in its namespaces
// (its own when none are listed), matching its label selector, of its
// connection when it names one.
func (r *Reconciler) selected(ctx context.Context, p *v1alpha1.VirtualMachineSnapshotPolicy) ([]v1alpha1.VirtualMachine, error) {
	sel, err := metav1.LabelSelectorAsSelector(&p.Spec.LabelSelector)
	if err != nil {
		return nil, errors.Wrap(err, "labelSelector is not a valid selector")
	}
	var out []v1alpha1.VirtualMachine
	for _, ns := range namespacesOf(p) {
		l := &v1alpha1.VirtualMachineList{}
		if err := r.kube.List(ctx, l, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, errors.Wrapf(err, "cannot list VirtualMachines in namespace %s", ns)
		}
		for _, vm := range l.Items {
			if vm.DeletionTimestamp.IsZero() && ofConnection(p, &vm) {
				out = append(out, vm)
			}
		}
	}
	return out, nil
}

func namespacesOf(p *v1alpha1.VirtualMachineSnapshotPolicy) []string {
	if len(p.Spec.NamespaceSelector.Namespaces) == 0 {
		return []string{p.Namespace}
	}
	return p.Spec.NamespaceSelector.Namespaces
}

func ofConnection(p *v1alpha1.VirtualMachineSnapshotPolicy, vm *v1alpha1.VirtualMachine) bool {
	return p.Spec.ConnectionRef == nil || vm.GetProviderConfigReference().Name == p.Spec.ConnectionRef.Name
}

// snapshot creates the VirtualMachineSnapshot of vm for slot, reporting
// whether it was new.
func (r *Reconciler) snapshot(ctx context.Context, p *v1alpha1.VirtualMachineSnapshotPolicy, vm *v1alpha1.VirtualMachine, slot time.Time) (bool, error) {
	stamp := slot.UTC().Format("20060102-1504")
	snapName := v1alpha1.SnapshotNameFor(p.Name + "-" + strings.ToLower(stamp))
	s := &v1alpha1.VirtualMachineSnapshot{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   vm.Namespace,
			Name:        objectName(vm.Name, snapName),
			Labels:      policyLabels(p, vm.Name),
			Annotations: map[string]string{AnnotationScheduledAt: slot.UTC().Format(time.RFC3339)},
		},
		Spec: v1alpha1.VirtualMachineSnapshotSpec{
			VirtualMachineName: vm.Name,
			SnapshotName:       snapName,
			Description:        "taken by VirtualMachineSnapshotPolicy " + p.Namespace + "/" + p.Name + " for the run of " + slot.UTC().Format(time.RFC3339),
		},
	}
	err := r.kube.Create(ctx, s)
	if kerrors.IsAlreadyExists(err) {
		return false, nil
	}
	r.changes.Record(ctx, s, v1alpha1.VirtualMachineSnapshotGroupVersionKind, changelog.Create, err, p)
	return err == nil, errors.Wrapf(err, "cannot create VirtualMachineSnapshot for VirtualMachine %s", vm.Name)
}

// objectName is the snapshot resource's name: the VM's and the snapshot's,
// within Kubernetes' 253 characters.
func objectName(vm, snap string) string {
	name := vm + "-" + strings.ReplaceAll(strings.ToLower(snap), "_", "-")
	if len(name) > 253 {
		name = name[len(name)-253:]
		name = strings.TrimLeft(name, "-.")
	}
	return name
}

func policyLabels(p *v1alpha1.VirtualMachineSnapshotPolicy, vm string) map[string]string {
	return map[string]string{
		v1alpha1.LabelSnapshotPolicy:          p.Name,
		v1alpha1.LabelSnapshotPolicyNamespace: p.Namespace,
		v1alpha1.LabelVirtualMachine:          vm,
	}
}

// made lists the VirtualMachineSnapshots the policy made, in its
// namespaces.
func (r *Reconciler) made(ctx context.Context, p *v1alpha1.VirtualMachineSnapshotPolicy) ([]v1alpha1.VirtualMachineSnapshot, error) {
	var out []v1alpha1.VirtualMachineSnapshot
	for _, ns := range namespacesOf(p) {
		l := &v1alpha1.VirtualMachineSnapshotList{}
		if err := r.kube.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{
			v1alpha1.LabelSnapshotPolicy: p.Name, v1alpha1.LabelSnapshotPolicyNamespace: p.Namespace,
		}); err != nil {
			return nil, errors.Wrapf(err, "cannot list the policy's snapshots in namespace %s", ns)
		}
		out = append(out, l.Items...)
	}
	return out, nil
}

// prune deletes, per VM, the snapshots the retention does not keep, and
// returns the failures by namespace/name.
func (r *Reconciler) prune(ctx context.Context, p *v1alpha1.VirtualMachineSnapshotPolicy, now time.Time) map[string]error {
	if p.Spec.Retention == nil {
		return nil
	}
	snaps, err := r.made(ctx, p)
	if err != nil {
		return map[string]error{p.Namespace + "/" + p.Name: err}
	}
	failures := map[string]error{}
	count := 0
	for key, group := range byVM(snaps) {
		for _, s := range pruned(p.Spec.Retention, group, now) {
			if !s.DeletionTimestamp.IsZero() {
				continue
			}
			err := r.kube.Delete(ctx, &s)
			if kerrors.IsNotFound(err) {
				continue
			}
			r.changes.Record(ctx, &s, v1alpha1.VirtualMachineSnapshotGroupVersionKind, changelog.Delete, err, p)
			if err != nil {
				failures[key] = errors.Wrapf(err, "cannot prune VirtualMachineSnapshot %s", s.Name)
				continue
			}
			count++
		}
	}
	p.Status.SnapshotsPruned += int64(count)
	if count > 0 {
		r.record.Event(p, event.Normal(reasonSnapshotsPruned, "pruned "+strconv.Itoa(count)+" snapshots beyond the retention"))
	}
	return failures
}

// byVM groups snapshots by namespace/VirtualMachine.
func byVM(snaps []v1alpha1.VirtualMachineSnapshot) map[string][]v1alpha1.VirtualMachineSnapshot {
	out := map[string][]v1alpha1.VirtualMachineSnapshot{}
	for _, s := range snaps {
		key := s.Namespace + "/" + s.Labels[v1alpha1.LabelVirtualMachine]
		out[key] = append(out[key], s)
	}
	return out
}

// setFailures replaces the per-VM conditions with one per failure of the
// last run and prune (Snapshot/<namespace>/<name>).
func setFailures(p *v1alpha1.VirtualMachineSnapshotPolicy, failures map[string]error) {
	kept := p.Status.Conditions[:0:0]
	for _, c := range p.Status.Conditions {
		if !strings.HasPrefix(string(c.Type), v1alpha1.ConditionTypeSnapshotPrefix) {
			kept = append(kept, c)
		}
	}
	keys := make([]string, 0, len(failures))
	for k := range failures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kept = append(kept, xpv2.Condition{
			Type: xpv2.ConditionType(v1alpha1.ConditionTypeSnapshotPrefix + k), Status: "False",
			Reason: v1alpha1.ReasonSnapshotFailed, Message: failures[k].Error(), LastTransitionTime: metav1.Now(),
		})
	}
	p.Status.Conditions = kept
}

// holdFinalizer keeps the finalizer exactly while the policy's snapshots
// are to be deleted with it.
func (r *Reconciler) holdFinalizer(ctx context.Context, p *v1alpha1.VirtualMachineSnapshotPolicy) error {
	want := p.Spec.SnapshotDeletionPolicy == v1alpha1.SnapshotDeletionDelete
	if want == controllerutil.ContainsFinalizer(p, finalizer) {
		return nil
	}
	if want {
		controllerutil.AddFinalizer(p, finalizer)
	} else {
		controllerutil.RemoveFinalizer(p, finalizer)
	}
	return errors.Wrap(r.kube.Update(ctx, p), "cannot update the policy's finalizer")
}

// finalize deletes the snapshots the policy made when it is asked to, then
// lets the policy go.
func (r *Reconciler) finalize(ctx context.Context, p *v1alpha1.VirtualMachineSnapshotPolicy) error {
	if !controllerutil.ContainsFinalizer(p, finalizer) {
		return nil
	}
	snaps, err := r.made(ctx, p)
	if err != nil {
		return err
	}
	for i := range snaps {
		err := r.kube.Delete(ctx, &snaps[i])
		if kerrors.IsNotFound(err) {
			continue
		}
		r.changes.Record(ctx, &snaps[i], v1alpha1.VirtualMachineSnapshotGroupVersionKind, changelog.Delete, err, p)
		if err != nil {
			return errors.Wrapf(err, "cannot delete VirtualMachineSnapshot %s/%s", snaps[i].Namespace, snaps[i].Name)
		}
	}
	controllerutil.RemoveFinalizer(p, finalizer)
	return errors.Wrap(r.kube.Update(ctx, p), "cannot release the policy")
}

// ControllerName is the name of the VirtualMachineSnapshotPolicy controller.
func ControllerName() string {
	return "snapshotpolicy/" + strings.ToLower(v1alpha1.VirtualMachineSnapshotPolicyGroupKind)
}

// Setup adds the VirtualMachineSnapshotPolicy controller to mgr. Only spec
// changes (and deletion, which bumps the generation) and a pause added or
// removed wake a policy; the schedule wakes it through RequeueAfter. A
// paused policy (crossplane.io/paused) takes and prunes nothing; the
// snapshots it creates and deletes are sent to the change log.
func Setup(mgr ctrl.Manager, o controller.Options, m *metrics.Proxmox) error {
	if err := statusmetrics.Setup(mgr, o, statusmetrics.SnapshotPolicyRuns(m)); err != nil {
		return err
	}
	name := ControllerName()
	//nolint:staticcheck // crossplane-runtime's event recorder needs the legacy recorder interface.
	recorder := event.NewAPIRecorder(mgr.GetEventRecorderFor(name), o.EventFilterFunctions...)
	r := NewReconciler(mgr.GetClient(), clock.RealClock{}, recorder)
	r.changes = changelog.NewRecorder(o, v1alpha1.VirtualMachineSnapshotPolicyKind)
	newPolicy := func() polling.Object { return &v1alpha1.VirtualMachineSnapshotPolicy{} }
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.VirtualMachineSnapshotPolicy{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, polling.PauseChanged()))).
		Complete(errors.WithSilentRequeueOnConflict(polling.UnlessPaused(mgr.GetClient(), newPolicy, recorder, r))) // a conflict is requeued, not logged as an error
}

// NewReconciler returns a Reconciler reading time from clk.
func NewReconciler(kube client.Client, clk clock.PassiveClock, record event.Recorder) *Reconciler {
	return &Reconciler{kube: kube, clock: clk, record: record}
}
