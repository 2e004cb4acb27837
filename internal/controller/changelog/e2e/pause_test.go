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

package e2e

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	changelogs "github.com/crossplane/crossplane-runtime/v2/apis/changelogs/proto/v1alpha1"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
	"github.com/kubemox/provider-proxmox/internal/controller/virtualmachineset"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// paused is the annotation that pauses a resource.
var paused = map[string]string{meta.AnnotationKeyReconciliationPaused: "true"}

type conditioned interface {
	client.Object
	resource.Conditioned
}

// reportsPause reports whether obj says it is paused, as managed resources
// do.
func reportsPause(obj conditioned) bool {
	c := obj.GetCondition(xpv2.TypeSynced)
	return c.Status == corev1.ConditionFalse && c.Reason == xpv2.ReasonReconcilePaused
}

// staysPaused checks, for stillPaused, that obj reports its pause and that
// idle (nothing done for it) holds.
func staysPaused(t *testing.T, hs *providertest.Harness, obj conditioned, idle func() bool) {
	t.Helper()
	hs.WaitFor(t, obj, "reporting its pause", wait, func() bool { return reportsPause(obj) })
	for end := time.Now().Add(stillPaused); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if err := hs.Kube.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		if !idle() || !reportsPause(obj) {
			t.Fatalf("%T %s: worked on while paused: %+v", obj, obj.GetName(), obj)
		}
	}
}

// resume removes the pause annotation.
func resume(t *testing.T, hs *providertest.Harness, obj client.Object) {
	t.Helper()
	hs.WaitFor(t, obj, "resumed", wait, func() bool {
		meta.RemoveAnnotations(obj, meta.AnnotationKeyReconciliationPaused)
		return hs.Kube.Update(context.Background(), obj) == nil
	})
}

// A paused VirtualMachine (crossplane-runtime's managed reconciler) creates
// no guest until the pause is lifted.
func TestPausedVirtualMachine(t *testing.T) {
	hs := require(t)
	ns := hs.Namespace(t, "pause-vm-")
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held", Annotations: paused},
		Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
			Name:         "held", NodeName: node,
			Template: &v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 1024}},
		}}
	if err := hs.Kube.Create(context.Background(), vm); err != nil {
		t.Fatal(err)
	}
	staysPaused(t, hs, vm, func() bool {
		return meta.GetExternalName(vm) == "" && len(providertest.MarkedGuests(hs.Sim, ns, vm.Name)) == 0
	})
	resume(t, hs, vm)
	hs.WaitFor(t, vm, "Ready and Synced", wait, func() bool { return providertest.ReadyAndSynced(vm) })
}

// A paused VirtualMachineSet creates no replica; resumed, it creates it,
// and the creation is in the change log as the set's.
func TestPausedVirtualMachineSet(t *testing.T) {
	hs := require(t)
	ns := hs.Namespace(t, "pause-set-")
	ctx := context.Background()
	set := &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Annotations: paused},
		Spec: v1alpha1.VirtualMachineSetSpec{
			Replicas: 1, NodeName: node, ConnectionRef: &v1alpha1.ConnectionReference{Name: connName},
			Template: v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 1024}},
		}}
	if err := hs.Kube.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	replicas := func() int {
		l := &v1alpha1.VirtualMachineList{}
		if err := hs.Kube.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{virtualmachineset.LabelSet: set.Name}); err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	staysPaused(t, hs, set, func() bool { return replicas() == 0 })
	resume(t, hs, set)
	hs.WaitFor(t, set, "Synced again with its replica", wait, func() bool {
		return set.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue && replicas() == 1
	})
	created := waitEntry(t, ns, "web-0", "of the set's creation", func(e *changelogs.ChangeLogEntry) bool {
		return e.GetOperation() == create && e.GetAdditionalDetails()[changelog.DetailReconciler] == v1alpha1.VirtualMachineSetKind
	})
	if owner := created.GetAdditionalDetails()[changelog.DetailOwner]; owner != ns+"/web" {
		t.Errorf("the set's create entry names the owner %q, want %s/web", owner, ns)
	}
}

// A paused VirtualMachineSnapshotPolicy schedules nothing and holds no
// finalizer; resumed, it schedules its next run.
func TestPausedSnapshotPolicy(t *testing.T) {
	hs := require(t)
	ns := hs.Namespace(t, "pause-policy-")
	p := &v1alpha1.VirtualMachineSnapshotPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly", Annotations: paused},
		Spec: v1alpha1.VirtualMachineSnapshotPolicySpec{
			SnapshotSchedule:       "0 3 * * *",
			LabelSelector:          metav1.LabelSelector{MatchLabels: map[string]string{"tier": "none"}},
			SnapshotDeletionPolicy: v1alpha1.SnapshotDeletionDelete,
		}}
	if err := hs.Kube.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	staysPaused(t, hs, p, func() bool { return p.Status.NextRunTime == nil && len(p.Finalizers) == 0 })
	resume(t, hs, p)
	hs.WaitFor(t, p, "scheduled", wait, func() bool {
		return p.Status.NextRunTime != nil && p.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue
	})
}

// A paused GuestImport does not run; resumed, it runs, and the resource it
// creates for the guest it finds is in the change log as the import's.
func TestPausedGuestImport(t *testing.T) {
	hs := require(t)
	ns := hs.Namespace(t, "pause-import-")
	ctx := context.Background()
	vmid := providertest.FreeVMID(t, hs.Sim, 3000)
	if err := hs.Sim.AddGuest(pvesim.GuestSeed{VMID: vmid, Node: node, Pool: ns,
		Config: map[string]string{"name": "found", "cores": "1", "memory": "1024"}}); err != nil {
		t.Fatal(err)
	}
	gi := &v1alpha1.GuestImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "found", Annotations: paused},
		Spec: v1alpha1.GuestImportSpec{
			ConnectionRef: &v1alpha1.ConnectionReference{Name: connName},
			Selector:      v1alpha1.GuestSelector{Pools: []string{ns}, Types: []v1alpha1.ImportGuestType{v1alpha1.ImportGuestQEMU}},
		}}
	if err := hs.Kube.Create(ctx, gi); err != nil {
		t.Fatal(err)
	}
	imported := func() int {
		l := &v1alpha1.VirtualMachineList{}
		if err := hs.Kube.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	staysPaused(t, hs, gi, func() bool { return gi.Status.LastRun == nil && imported() == 0 })
	resume(t, hs, gi)
	hs.WaitFor(t, gi, "run", wait, func() bool { return gi.Status.LastRun != nil && imported() == 1 })
	providertest.Eventually(t, wait, 250*time.Millisecond, func() bool {
		return slices.ContainsFunc(service.in(ns), func(e *changelogs.ChangeLogEntry) bool {
			d := e.GetAdditionalDetails()
			return e.GetKind() == v1alpha1.VirtualMachineKind && e.GetOperation() == create &&
				d[changelog.DetailReconciler] == v1alpha1.GuestImportKind && d[changelog.DetailOwner] == ns+"/found" &&
				e.GetExternalName() == strconv.Itoa(vmid)
		})
	}, func() string {
		return "no create entry of the import's VirtualMachine in " + ns + ": " + opsString(service.in(ns))
	})
}
