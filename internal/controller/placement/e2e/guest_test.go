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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func placedVM(ns, name, template string, allowed ...string) *v1alpha1.VirtualMachine {
	return &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		Name:         name, Placement: &v1alpha1.GuestPlacementSpec{AllowedNodes: allowed},
		Template: &v1alpha1.VirtualMachineCloneSpec{Name: template, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 1024}},
	}}
}

func mustCreate(t *testing.T, obj client.Object) {
	t.Helper()
	if err := h.Kube.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %s/%s: %v", obj.GetNamespace(), obj.GetName(), err)
	}
}

func vmReady(vm *v1alpha1.VirtualMachine) bool { return providertest.ReadyAndSynced(vm) }

// A VirtualMachine with placement over the four nodes lands on pve2, the
// online node with the most free memory (pve3 has more but is offline),
// records why in status.placement, and stays there when another node
// later has more free memory.
func TestVirtualMachinePlacedOnMostFreeMemory(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "place-vm-")
	vm := placedVM(ns, "web", vmTemplate, allNodes...)
	mustCreate(t, vm)
	vm = waitFor(t, vm, "Ready", vmReady)
	got := vm.Status.Placement
	want := "most free memory (51200 MiB); skipped pve3: status offline"
	if got == nil || got.Node != "pve2" || got.Reason != want {
		t.Fatalf("status.placement = %+v, want pve2 with reason %q", got, want)
	}
	vmid := providertest.VMIDOf(t, vm)
	if n := guestNode(t, vmid); n != "pve2" {
		t.Fatalf("the guest is on %s, want pve2", n)
	}
	h.WaitEvent(t, ns, "web", "Placed", wait)

	// pve1 now has the most free memory: nothing moves. (pve1 is where the
	// later tests expect a VM whatever its figures; the provider may keep
	// this listing a few seconds after the cleanup.)
	if err := h.Sim.SetNodeMemory("pve1", pvesim.NodeMemory{Total: 512 << 30, Used: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Sim.SetNodeMemory("pve1", memory["pve1"]) })
	time.Sleep(2 * poll)
	vm = waitFor(t, vm, "Ready after the figures changed", vmReady)
	if vm.Status.Placement == nil || *vm.Status.Placement != *got || guestNode(t, vmid) != "pve2" || vm.Status.LastMigration != nil {
		t.Errorf("the VM moved or was placed again: placement %+v, guest on %s, migration %+v", vm.Status.Placement, guestNode(t, vmid), vm.Status.LastMigration)
	}
}

// A template whose disk is on local storage of pve1 can only be cloned on
// pve1: another allowed node is skipped saying why, and with no allowed
// node left the VM is not created and Synced says why for each node.
func TestVirtualMachineTemplateReach(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "place-reach-")
	ok := placedVM(ns, "reach", localTemplate, "pve2", "pve1")
	mustCreate(t, ok)
	ok = waitFor(t, ok, "Ready", vmReady)
	if p := ok.Status.Placement; p == nil || p.Node != "pve1" || !strings.Contains(p.Reason, `skipped pve2: template "local-only" is on node pve1 with volumes on storage that is not shared (local-lvm)`) {
		t.Errorf("status.placement = %+v, want pve1 with pve2 skipped for the local template", p)
	}

	none := placedVM(ns, "nowhere", localTemplate, "pve2", "pve3")
	mustCreate(t, none)
	none = waitFor(t, none, "Synced False", func(vm *v1alpha1.VirtualMachine) bool {
		return vm.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionFalse
	})
	msg := none.GetCondition(xpv2.TypeSynced).Message
	for _, want := range []string{"no allowed node can take the guest", "pve2: template \"local-only\" is on node pve1", "pve3: status offline"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Synced message %q lacks %q", msg, want)
		}
	}
	if g := providertest.MarkedGuests(h.Sim, ns, "nowhere"); len(g) != 0 {
		t.Errorf("nothing may be created without an eligible node: %+v", g)
	}
}

// A Container cloned onto the shared storage may go to any node: it lands
// on pve2 too.
func TestContainerPlaced(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "place-ct-")
	ct := &v1alpha1.Container{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "box"}, Spec: v1alpha1.ContainerSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		Name:         "box", Placement: &v1alpha1.GuestPlacementSpec{AllowedNodes: []string{"pve3", "pve4", "pve2"}},
		Template: &v1alpha1.ContainerTemplate{Name: ctTemplate, Cores: 1, Memory: 512,
			Disk: []v1alpha1.ContainerDisk{{Storage: sharedStorage, Size: 4}}},
	}}
	mustCreate(t, ct)
	ct = waitFor(t, ct, "Ready", func(c *v1alpha1.Container) bool { return providertest.ReadyAndSynced(c) })
	if p := ct.Status.Placement; p == nil || p.Node != "pve2" {
		t.Fatalf("status.placement = %+v, want pve2", p)
	}
	if n := guestNode(t, providertest.VMIDOf(t, ct)); n != "pve2" {
		t.Errorf("the container is on %s, want pve2", n)
	}
}
