package e2e

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// The examples apply and converge: a snapshot of the sample VM with its RAM,
// rolled back once per token, its description changed in place, deleted
// without touching the VM; a snapshot of a guest the provider does not
// manage; a policy that schedules its next run.
func TestExamples(t *testing.T) {
	require(t)
	ctx := context.Background()
	ns := h.Namespace(t, "examples-")
	applyExample(t, ns, "virtualmachine", "clone-new.yaml")
	vm := waitVMReady(t, ns, "virtualmachine-sample-clone-new")
	vmid := int(vm.Status.Status.ID)

	applyExample(t, ns, "virtualmachinesnapshot", "snapshot.yaml")
	s := waitSnapshot(t, ns, "pre-upgrade", "Ready", func(s *v1alpha1.VirtualMachineSnapshot) bool {
		return isReady(s.GetCondition(xpv2.TypeReady))
	})
	taken, ok := snapshotsOf(t, vmid)["pre-upgrade"]
	if !ok || !taken.VMState || taken.Description != "before the kernel upgrade" {
		t.Fatalf("PVE's snapshot = %+v (found %v), want pre-upgrade with RAM and the example's description", taken, ok)
	}
	if want := vm.GetProviderConfigReference().Name; s.Status.ConnectionName != want {
		t.Errorf("status.connectionName = %q, want the VM's connection %q", s.Status.ConnectionName, want)
	}
	if int(s.Status.VMID) != vmid || s.Status.SnapTime == nil || !s.Status.VMState || s.Status.Status != "Created" || meta.GetExternalName(s) != "pre-upgrade" {
		t.Errorf("status = %+v, external name %q", s.Status, meta.GetExternalName(s))
	}

	meta.AddAnnotations(s, map[string]string{v1alpha1.AnnotationRollback: "r1"})
	if err := h.Kube.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	s = waitSnapshot(t, ns, "pre-upgrade", "rolled back for r1", func(s *v1alpha1.VirtualMachineSnapshot) bool {
		rb := s.Status.Rollback
		return rb != nil && rb.Token == "r1" && rb.Task != nil && rb.Task.ExitStatus == "OK"
	})
	waitVMReady(t, ns, vm.Name)

	// A spec change makes the controller reconcile with the same token:
	// the description is applied, no second rollback is made.
	s.Spec.Description = "kept after the rollback"
	if err := h.Kube.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitSnapshot(t, ns, "pre-upgrade", "synced with the new description", func(s *v1alpha1.VirtualMachineSnapshot) bool {
		c := s.GetCondition(xpv2.TypeSynced)
		return isReady(c) && c.ObservedGeneration == s.Generation
	})
	if d := snapshotsOf(t, vmid)["pre-upgrade"].Description; d != "kept after the rollback" {
		t.Errorf("description in PVE = %q", d)
	}
	if n := rollbacksOf(t, vmid); n != 1 {
		t.Errorf("rollbacks = %d for one token, want 1", n)
	}

	applyExample(t, ns, "virtualmachinesnapshot", "unmanaged.yaml")
	waitSnapshot(t, ns, "nightly-4242", "Ready", func(s *v1alpha1.VirtualMachineSnapshot) bool {
		return isReady(s.GetCondition(xpv2.TypeReady))
	})
	if _, ok := snapshotsOf(t, unmanagedVMID)["nightly-4242"]; !ok {
		t.Errorf("no snapshot nightly-4242 on guest %d", unmanagedVMID)
	}

	if err := h.Kube.Delete(ctx, s); err != nil {
		t.Fatal(err)
	}
	h.WaitGone(t, s, wait)
	if _, ok := snapshotsOf(t, vmid)["pre-upgrade"]; ok {
		t.Error("the snapshot is still in PVE after its resource went")
	}
	if g, ok := h.Sim.Guest(vmid); !ok || g.Status != "running" {
		t.Errorf("the VM after its snapshot's deletion: %+v (exists %v), want it running", g, ok)
	}

	applyExample(t, ns, "virtualmachinesnapshotpolicy", "policy.yaml")
	p := &v1alpha1.VirtualMachineSnapshotPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly-db"}}
	h.WaitFor(t, p, "scheduled", wait, func() bool {
		return isReady(p.Status.GetCondition(xpv2.TypeReady)) && p.Status.NextRunTime != nil
	})
	if got := p.Status.NextRunTime.UTC(); got.Minute() != 0 || (got.Hour() != 0 && got.Hour() != 1) {
		t.Errorf("next run %s, want 02:00 Berlin time (00:00 or 01:00 UTC)", got)
	}
	if err := h.Kube.Delete(ctx, vm); err != nil {
		t.Fatal(err)
	}
	h.WaitGone(t, vm, wait)
}

// Deleting the VM deletes its guest and with it the snapshots; the snapshot
// resource reports the VM gone and can then be deleted.
func TestVirtualMachineDeletedUnderItsSnapshot(t *testing.T) {
	require(t)
	ctx := context.Background()
	ns := h.Namespace(t, "snap-")
	vm := &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "short-lived"},
		Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
			Name:         "short-lived", NodeName: node,
			VMSpec: &v1alpha1.VirtualMachineScratchSpec{VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Socket: 1, Memory: 512}},
		},
	}
	if err := h.Kube.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	vm = waitVMReady(t, ns, vm.Name)
	s := &v1alpha1.VirtualMachineSnapshot{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "before-the-end"},
		Spec:       v1alpha1.VirtualMachineSnapshotSpec{VirtualMachineName: vm.Name},
	}
	if err := h.Kube.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitSnapshot(t, ns, s.Name, "Ready", func(s *v1alpha1.VirtualMachineSnapshot) bool { return isReady(s.GetCondition(xpv2.TypeReady)) })
	if err := h.Kube.Delete(ctx, vm); err != nil {
		t.Fatal(err)
	}
	h.WaitGone(t, vm, wait)
	waitSnapshot(t, ns, s.Name, "reporting its VM gone", func(s *v1alpha1.VirtualMachineSnapshot) bool {
		return s.GetCondition(xpv2.TypeReady).Reason == v1alpha1.ReasonVirtualMachineGone
	})
	err := h.Kube.Delete(ctx, s)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	h.WaitGone(t, s, wait)
}
