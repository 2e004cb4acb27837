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
	"fmt"
	"strconv"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/virtualmachineset"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A VirtualMachineSet of 2 makes web-0 and web-1, owned by it and Ready;
// the scale subresource takes it to 3; a template change reaches every VM in
// place (same VMIDs); a protected set's scale-down stops with a condition,
// and goes on, guests destroyed, once the protection is lifted.
func TestVirtualMachineSet(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	ctx := context.Background()
	set := &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: v1alpha1.VirtualMachineSetSpec{
		Replicas: 2, NodeName: node, ConnectionRef: &v1alpha1.ConnectionReference{Name: connName},
		Template: v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 1024}},
	}}
	if err := hs.Kube.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitSet(t, hs, ns, "web", "2 Ready", func(s *v1alpha1.VirtualMachineSet) bool { return s.Status.ReadyReplicas == 2 && s.Status.Replicas == 2 })
	vmids := map[string]int{}
	for i := range 2 {
		vm := hs.waitReady(t, ns, "web-"+strconv.Itoa(i))
		if !metav1.IsControlledBy(vm, set) || vm.Labels[virtualmachineset.LabelSet] != "web" || vm.Spec.Name != vm.Name {
			t.Errorf("%s: owner %v, labels %v, name %q", vm.Name, vm.OwnerReferences, vm.Labels, vm.Spec.Name)
		}
		vmids[vm.Name] = providertest.VMIDOf(t, vm)
	}

	// kubectl scale goes through the scale subresource.
	scale := &autoscalingv1.Scale{}
	if err := hs.Kube.SubResource("scale").Get(ctx, set, scale); err != nil {
		t.Fatal(err)
	}
	if scale.Status.Selector != virtualmachineset.LabelSet+"=web" {
		t.Errorf("scale selector %q", scale.Status.Selector)
	}
	scale.Spec.Replicas = 3
	if err := hs.Kube.SubResource("scale").Update(ctx, set, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	waitSet(t, hs, ns, "web", "3 Ready", func(s *v1alpha1.VirtualMachineSet) bool { return s.Status.ReadyReplicas == 3 })

	// A template change is made in place by each VM's own drift correction.
	patchSet(t, hs, ns, "web", `{"spec":{"template":{"cores":2}}}`)
	deadline := time.Now().Add(wait)
	for name, vmid := range vmids {
		for {
			g, ok := hs.Sim.Guest(vmid)
			if ok && g.Config["cores"] == "2" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s (VMID %d) never got 2 cores: %+v", name, vmid, g.Config)
			}
			time.Sleep(250 * time.Millisecond)
		}
		if vm := hs.waitReady(t, ns, name); providertest.VMIDOf(t, vm) != vmid {
			t.Errorf("%s was recreated", name)
		}
	}

	// A protected set does not scale down; unprotected, it does, highest first.
	patchSet(t, hs, ns, "web", `{"spec":{"deletionProtection":true,"replicas":1}}`)
	waitSet(t, hs, ns, "web", "ScaleDownBlocked", func(s *v1alpha1.VirtualMachineSet) bool {
		c := s.Status.GetCondition(virtualmachineset.TypeScaleDownBlocked)
		return c.Status == corev1.ConditionTrue && s.Status.Replicas == 3
	})
	web2 := hs.waitReady(t, ns, "web-2")
	vmid2 := providertest.VMIDOf(t, web2)
	patchSet(t, hs, ns, "web", `{"spec":{"deletionProtection":false}}`)
	waitSet(t, hs, ns, "web", "scaled down to 1", func(s *v1alpha1.VirtualMachineSet) bool {
		return s.Status.Replicas == 1 && s.Status.ReadyReplicas == 1 &&
			s.Status.GetCondition(virtualmachineset.TypeScaleDownBlocked).Status == corev1.ConditionFalse
	})
	hs.waitGone(t, ns, "web-2")
	if _, ok := hs.Sim.Guest(vmid2); ok {
		t.Errorf("the scaled-down VM's guest %d is still in Proxmox VE", vmid2)
	}
	if err := hs.Kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web-0"}, &v1alpha1.VirtualMachine{}); kerrors.IsNotFound(err) {
		t.Error("scale-down removed web-0, want the highest indices first")
	}
}

func patchSet(t *testing.T, hs *harness, ns, name, patch string) {
	t.Helper()
	set := &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := hs.Kube.Patch(context.Background(), set, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("patch %s: %v", patch, err)
	}
}

func waitSet(t *testing.T, hs *harness, ns, name, what string, cond func(*v1alpha1.VirtualMachineSet) bool) *v1alpha1.VirtualMachineSet {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		s := &v1alpha1.VirtualMachineSet{}
		err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, s)
		if err == nil && cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("set %s never %s: %+v, %v", name, what, s.Status, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// A set adopts existing VirtualMachines of its replicas' names that no one
// controls, in Observe mode, as kubemox's migration needs: they become the
// set's (owner reference, label), keep their VMIDs, count as Ready replicas,
// and nothing in Proxmox VE changes.
func TestVirtualMachineSetAdoptsInObserveMode(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	ctx := context.Background()
	observe := xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	vmids := make([]int, 0, 2)
	before := make([]string, 0, 2)
	for i := range 2 {
		vmid := providertest.FreeVMID(t, hs.Sim, 720+i*10)
		cfg := map[string]string{"name": "legacy-" + strconv.Itoa(i), "cores": "1", "memory": "512", "net0": "virtio,bridge=vmbr0"}
		if err := hs.Sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: node, VMID: vmid, Config: cfg, Running: true}); err != nil {
			t.Fatal(err)
		}
		g, _ := hs.Sim.Guest(vmid)
		before = append(before, fmt.Sprint(g.Config))
		vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy-" + strconv.Itoa(i)}, Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}, ManagementPolicies: observe},
		}}
		meta.SetExternalName(vm, strconv.Itoa(vmid))
		hs.create(t, vm)
		vmids = append(vmids, vmid)
	}
	guestsBefore := len(hs.Sim.Guests())
	set := &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy"}, Spec: v1alpha1.VirtualMachineSetSpec{
		Replicas: 2, NodeName: node, ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}, ManagementPolicies: observe,
		Template: v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 512}},
	}}
	if err := hs.Kube.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitSet(t, hs, ns, "legacy", "2 Ready replicas adopted", func(s *v1alpha1.VirtualMachineSet) bool { return s.Status.ReadyReplicas == 2 })
	hs.WaitEvent(t, ns, "legacy", "AdoptedVM", wait)
	for i, vmid := range vmids {
		vm := hs.waitReady(t, ns, "legacy-"+strconv.Itoa(i))
		if !metav1.IsControlledBy(vm, set) || vm.Labels[virtualmachineset.LabelSet] != "legacy" || providertest.VMIDOf(t, vm) != vmid {
			t.Errorf("%s: owners %v, labels %v, VMID %d; want adopted with VMID %d", vm.Name, vm.OwnerReferences, vm.Labels, providertest.VMIDOf(t, vm), vmid)
		}
	}
	time.Sleep(3 * time.Second) // any write would follow the adoption at once
	for i, vmid := range vmids {
		if g, _ := hs.Sim.Guest(vmid); fmt.Sprint(g.Config) != before[i] || g.Status != "running" {
			t.Errorf("adopting changed guest %d:\nbefore %s\nafter  %v", vmid, before[i], g.Config)
		}
	}
	if n := len(hs.Sim.Guests()); n != guestsBefore {
		t.Errorf("%d guests after the adoption, %d before: want nothing cloned", n, guestsBefore)
	}
}
