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

package adoptione2e

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// guestResources are the names of the guest resources manifests makes,
// with the VirtualMachineSet's members.
var guestResources = []string{"vm-0", "vm-1", "vm-2", "ct", "set-0", "set-1", "set-2"}

// manifests are what a GitOps repository holds for namespace ns: three
// VMs, a container and a VirtualMachineSet of three.
func manifests(ns string) []client.Object {
	conn := v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}}
	hw := v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 1024}
	out := make([]client.Object, 0, 5)
	for i := range 3 {
		name := "vm-" + strconv.Itoa(i)
		out = append(out, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: conn, Name: name, NodeName: node,
			Template: &v1alpha1.VirtualMachineCloneSpec{Name: vmTemplate, VirtualMachineHardware: hw},
		}})
	}
	return append(out, &v1alpha1.Container{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ct"}, Spec: v1alpha1.ContainerSpec{
		ResourceSpec: conn, Name: "ct", NodeName: node,
		Template: &v1alpha1.ContainerTemplate{Name: ctTemplate, Cores: 1, Memory: 512},
	}}, &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "set"}, Spec: v1alpha1.VirtualMachineSetSpec{
		Replicas: 3, NodeName: node, ConnectionRef: &v1alpha1.ConnectionReference{Name: connName},
		Template: v1alpha1.VirtualMachineCloneSpec{Name: vmTemplate, VirtualMachineHardware: hw},
	}})
}

// apply creates ns and the manifests in c.
func (c *cluster) apply(t *testing.T, ns string) {
	t.Helper()
	objs := append([]client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}}, manifests(ns)...)
	for _, o := range objs {
		if err := c.kube.Create(context.Background(), o); err != nil {
			t.Fatalf("create %s: %v", o.GetName(), err)
		}
	}
}

// get reads the guest resource name of ns (the container is "ct").
func (c *cluster) get(ns, name string) (resource.Managed, error) {
	var mg resource.Managed = &v1alpha1.VirtualMachine{}
	if name == "ct" {
		mg = &v1alpha1.Container{}
	}
	err := c.kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, mg)
	return mg, err
}

// waitAll waits until every guest resource of ns satisfies cond.
func (c *cluster) waitAll(t *testing.T, p *providertest.Process, ns, what string, cond func(resource.Managed) bool) map[string]resource.Managed {
	t.Helper()
	out := map[string]resource.Managed{}
	p.WaitFor(t, what, wait, func() bool {
		for _, name := range guestResources {
			mg, err := c.get(ns, name)
			if err != nil || !cond(mg) {
				return false
			}
			out[name] = mg
		}
		return true
	})
	return out
}

func isReady(mg resource.Managed) bool { return providertest.ReadyAndSynced(mg) }

func waitingForOptIn(mg resource.Managed) bool {
	return mg.GetCondition(xpv2.TypeReady).Reason == v1alpha1.ReasonAdoptionRequired
}

// adoptionOf is a guest resource's status.adoption.
func adoptionOf(mg resource.Managed) *v1alpha1.AdoptionStatus {
	switch o := mg.(type) {
	case *v1alpha1.VirtualMachine:
		return o.Status.Adoption
	case *v1alpha1.Container:
		return o.Status.Adoption
	}
	return nil
}

// markedIn are the simulator's guests marked by a resource of ns, by VMID.
func markedIn(ns string) []int {
	var out []int
	for _, g := range sim.Guests() {
		if strings.Contains(g.Config["description"], "crossplane: "+ns+"/") {
			out = append(out, g.VMID)
		}
	}
	sort.Ints(out)
	return out
}

var (
	createRe = regexp.MustCompile(`^POST /nodes/[^/]+/(qemu|lxc)(/\d+/clone)?$`)
	configRe = regexp.MustCompile(`^(PUT|POST) /nodes/[^/]+/(qemu|lxc)/(\d+)/config$`)
)

// writes are the create and clone requests the simulator logged, and its
// config writes by VMID.
func writes() (creates []string, configs map[int]int) {
	configs = map[int]int{}
	for _, r := range sim.RequestLog() {
		line := r.Method + " " + r.Path
		if createRe.MatchString(line) {
			creates = append(creates, line)
		}
		if m := configRe.FindStringSubmatch(line); m != nil {
			id, _ := strconv.Atoi(m[3])
			configs[id]++
		}
	}
	return creates, configs
}

func vmidsOf(t *testing.T, rs map[string]resource.Managed) map[string]int {
	t.Helper()
	out := map[string]int{}
	for name, mg := range rs {
		out[name] = providertest.VMIDOf(t, mg)
	}
	return out
}

// TestRebuiltClusterAdoptsItsGuests is the scenario: guests made
// from manifests on one management cluster, that cluster gone, the same
// manifests applied on a new one. Without the opt-in the new cluster creates
// nothing and says what it found; with it, every resource is Ready on its
// old guest, with no create or clone and one config write (the marker) per
// guest.
func TestRebuiltClusterAdoptsItsGuests(t *testing.T) {
	first.require(t)
	ns := fmt.Sprintf("rebuild-%d", time.Now().UnixNano()%1000000)
	second.setAdoption(t, "null")
	t.Cleanup(func() { second.setAdoption(t, "null") })

	pa := first.start(t)
	first.apply(t, ns)
	before := vmidsOf(t, first.waitAll(t, pa, ns, "every guest resource Ready on the first cluster", isReady))
	pa.Kill(t)
	guestsBefore := markedIn(ns)
	if len(guestsBefore) != len(guestResources) {
		t.Fatalf("the first cluster made guests %v, want %d", guestsBefore, len(guestResources))
	}

	sim.ResetCounters()
	pb := second.start(t)
	second.apply(t, ns)
	waiting := second.waitAll(t, pb, ns, "every guest resource waiting for the adoption opt-in", waitingForOptIn)
	for name, mg := range waiting {
		msg := mg.GetCondition(xpv2.TypeReady).Message
		if !strings.Contains(msg, strconv.Itoa(before[name])) || !strings.Contains(msg, first.id) || !strings.Contains(msg, "node "+node) {
			t.Errorf("%s: the condition does not name VMID %d, node %s and cluster %s: %q", name, before[name], node, first.id, msg)
		}
	}
	if got := markedIn(ns); !equal(got, guestsBefore) {
		t.Fatalf("without the opt-in the guests went from %v to %v", guestsBefore, got)
	}
	if creates, configs := writes(); len(creates) > 0 || len(configs) > 0 {
		t.Fatalf("without the opt-in the second cluster sent creates %v and config writes %v", creates, configs)
	}

	second.setAdoption(t, fmt.Sprintf(`{"fromClusters":[%q]}`, first.id))
	adopted := second.waitAll(t, pb, ns, "every guest resource Ready after the opt-in", isReady)
	after := vmidsOf(t, adopted)
	for name, mg := range adopted {
		if after[name] != before[name] {
			t.Errorf("%s: VMID %d on the second cluster, %d on the first", name, after[name], before[name])
		}
		if a := adoptionOf(mg); a == nil || a.FromCluster != first.id || int(a.VMID) != before[name] {
			t.Errorf("%s: status.adoption %+v, want from cluster %s, VMID %d", name, a, first.id, before[name])
		}
	}
	guestsAfter := markedIn(ns)
	creates, configs := writes()
	t.Logf("guests before %v, after %v; creates %v; config writes by VMID %v", guestsBefore, guestsAfter, creates, configs)
	if !equal(guestsAfter, guestsBefore) {
		t.Errorf("guests went from %v to %v", guestsBefore, guestsAfter)
	}
	if len(creates) > 0 {
		t.Errorf("the second cluster created or cloned: %v", creates)
	}
	for _, id := range guestsBefore {
		if configs[id] != 1 {
			t.Errorf("guest %d: %d config writes, want 1 (the marker)", id, configs[id])
		}
		g, _ := sim.Guest(id)
		if !strings.Contains(g.Config["description"], "cluster="+second.id) {
			t.Errorf("guest %d: marker %q does not name the second cluster", id, g.Config["description"])
		}
	}
}

// setAdoption sets the spec.adoption of c's connection (JSON; "null"
// removes it).
func (c *cluster) setAdoption(t *testing.T, policy string) {
	t.Helper()
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: connName}}
	patch := `{"spec":{"adoption":` + policy + `}}`
	if err := c.kube.Patch(context.Background(), pc, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("patch the connection's adoption policy to %s: %v", policy, err)
	}
}

// TestOrphanedResourceAppliedAgainAdopts deletes a VM whose policies do not
// delete (its guest stays) and applies it again: the new object (a new UID)
// adopts the guest its marker names instead of creating one.
func TestOrphanedResourceAppliedAgainAdopts(t *testing.T) {
	first.require(t)
	ns := fmt.Sprintf("orphan-%d", time.Now().UnixNano()%1000000)
	p := first.start(t)
	newVM := func() *v1alpha1.VirtualMachine {
		vm := manifests(ns)[0].(*v1alpha1.VirtualMachine) //nolint:forcetypeassert // manifests starts with a VM
		vm.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}
		return vm
	}
	if err := first.kube.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	vm := newVM()
	if err := first.kube.Create(context.Background(), vm); err != nil {
		t.Fatal(err)
	}
	readyVM := func() *v1alpha1.VirtualMachine {
		got := &v1alpha1.VirtualMachine{}
		p.WaitFor(t, "VM Ready", wait, func() bool {
			err := first.kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: vm.Name}, got)
			return err == nil && isReady(got)
		})
		return got
	}
	old := readyVM()
	vmid := providertest.VMIDOf(t, old)
	if err := first.kube.Delete(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, "the orphaned VM gone from the API server", wait, func() bool {
		err := first.kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: vm.Name}, &v1alpha1.VirtualMachine{})
		return err != nil
	})
	sim.ResetCounters()
	again := newVM()
	if err := first.kube.Create(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	got := readyVM()
	if meta.GetExternalName(got) != strconv.Itoa(vmid) {
		t.Errorf("applied again: external name %q, want the orphaned guest %d", meta.GetExternalName(got), vmid)
	}
	if a := got.Status.Adoption; a == nil || a.FromCluster != first.id || a.PreviousUID != string(old.UID) {
		t.Errorf("status.adoption %+v, want from cluster %s, previous UID %s", a, first.id, old.UID)
	}
	if guests := providertest.MarkedGuests(sim, ns, vm.Name); len(guests) != 1 || guests[0].VMID != vmid {
		t.Errorf("guests marked by %s/%s: %v, want only %d", ns, vm.Name, viewIDs(guests), vmid)
	}
	if creates, configs := writes(); len(creates) > 0 || configs[vmid] != 1 {
		t.Errorf("creates %v, config writes %v: want none and one for %d", creates, configs, vmid)
	}
}

func viewIDs(gs []pvesim.GuestView) []int {
	out := make([]int, 0, len(gs))
	for _, g := range gs {
		out = append(out, g.VMID)
	}
	return out
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTwoLiveClustersKeepTheirGuests runs both management clusters at once
// with the same names and no opt-in: the second creates nothing and waits,
// and the first keeps its guest, marker untouched.
func TestTwoLiveClustersKeepTheirGuests(t *testing.T) {
	first.require(t)
	ns := fmt.Sprintf("live-%d", time.Now().UnixNano()%1000000)
	second.setAdoption(t, "null")
	pa, pb := first.start(t), second.start(t)
	vm := manifests(ns)[0]
	for _, c := range []*cluster{first, second} {
		if err := c.kube.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.kube.Create(context.Background(), vm.DeepCopyObject().(client.Object)); err != nil { //nolint:forcetypeassert // a copy of a client.Object
		t.Fatal(err)
	}
	var mine resource.Managed
	pa.WaitFor(t, "the first cluster's VM Ready", wait, func() bool {
		mg, err := first.get(ns, vm.GetName())
		mine = mg
		return err == nil && isReady(mg)
	})
	vmid := providertest.VMIDOf(t, mine)
	marker := func() string { g, _ := sim.Guest(vmid); return g.Config["description"] }
	before := marker()
	theirs := vm.DeepCopyObject().(client.Object) //nolint:forcetypeassert // a copy of a client.Object
	if err := second.kube.Create(context.Background(), theirs); err != nil {
		t.Fatal(err)
	}
	// Gone before the providers stop: a later opt-in on the second cluster
	// must not find it waiting.
	t.Cleanup(func() { _ = second.kube.Delete(context.Background(), theirs) })
	pb.WaitFor(t, "the second cluster's VM waiting for the opt-in", wait, func() bool {
		mg, err := second.get(ns, vm.GetName())
		return err == nil && waitingForOptIn(mg)
	})
	time.Sleep(6 * time.Second) // a poll of both providers
	if got := providertest.MarkedGuests(sim, ns, vm.GetName()); len(got) != 1 || got[0].VMID != vmid {
		t.Errorf("guests marked by %s/%s: %v, want only the first cluster's %d", ns, vm.GetName(), viewIDs(got), vmid)
	}
	if after := marker(); after != before || !strings.Contains(after, "cluster="+first.id) {
		t.Errorf("the first cluster's marker changed: %q -> %q", before, after)
	}
	if mg, err := first.get(ns, vm.GetName()); err != nil || !isReady(mg) || meta.GetExternalName(mg) != strconv.Itoa(vmid) {
		t.Errorf("the first cluster's VM: %v, Ready %v, external name %q", err, err == nil && isReady(mg), meta.GetExternalName(mine))
	}
}
