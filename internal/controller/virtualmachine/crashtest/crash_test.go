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

// Package crashtest SIGKILLs the provider binary in the middle of a clone
// and checks a restarted provider ends with exactly one VM, Ready without
// help. It has its own API server: the provider runs as a subprocess here,
// so no in-process provider may compete for the resources.
package crashtest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	wait         = 120 * time.Second
	node         = "lowtower"
	templateName = "debian-12"
)

// pe is the API server and provider binary of this package.
var pe providertest.BinaryEnv

func TestMain(m *testing.M) { os.Exit(providertest.BinaryMain(m, &pe)) }

type fixture struct{ *providertest.SimFixture }

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, pvesim.Options{}) }

func newFixtureWith(t *testing.T, opts pvesim.Options) *fixture {
	t.Helper()
	opts.Nodes = []string{node}
	sf := pe.NewSimFixture(t, "crash", opts)
	if err := sf.Sim.AddTemplate(node, 9000, templateName); err != nil {
		t.Fatal(err)
	}
	return &fixture{sf}
}

func (f *fixture) vm(name string) *v1alpha1.VirtualMachine {
	return &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: name}, Spec: v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: f.Connection}},
		Name:         name, NodeName: node,
		Template: &v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 2, Memory: 2048}},
	}}
}

func (f *fixture) waitReady(t *testing.T, p *providertest.Process, name string) *v1alpha1.VirtualMachine {
	t.Helper()
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: name}}
	f.WaitReady(t, p, vm, wait)
	return vm
}

// assertOneVM checks the crash left exactly one VM: the template plus one
// guest, carrying the marker of ns/name.
func (f *fixture) assertOneVM(t *testing.T, name string) {
	t.Helper()
	if n := len(providertest.MarkedGuests(f.Sim, f.Namespace, name)); n != 1 {
		t.Errorf("%d guests carry the resource's marker, want 1", n)
	}
	if got := len(f.Sim.Guests()); got != 2 {
		t.Errorf("guests = %d, want template + 1", got)
	}
}

// The provider dies while PVE has applied the clone but its answer has not
// arrived: the restarted provider finds the guest at the VMID recorded
// before the call and makes no second one.
func TestKilledWhileCloneResponseHeld(t *testing.T) {
	f := newFixture(t)
	f.KillWhileAnswerHeld(t, &pe, "POST", "/nodes/*/qemu/*/clone", f.vm("held"), wait)
	if got := len(f.Sim.Guests()); got != 2 {
		t.Fatalf("guests after the kill = %d, want template + 1", got)
	}
	p2 := pe.StartProvider(t)
	vm := f.waitReady(t, p2, "held")
	f.assertOneVM(t, "held")
	if vm.Status.Status.State != "running" {
		t.Errorf("state = %q, want running", vm.Status.Status.State)
	}
}

// The simulator applies the clone and drops the connection; the provider is
// killed right after and restarted: still exactly one VM, Ready.
func TestKilledAfterDroppedCloneResponse(t *testing.T) {
	f := newFixture(t)
	f.Sim.DropAfterApply("POST", "/nodes/*/qemu/*/clone")
	p1 := pe.StartProvider(t)
	if err := f.Kube.Create(context.Background(), f.vm("dropped")); err != nil {
		t.Fatal(err)
	}
	p1.WaitFor(t, "a clone applied", wait, func() bool { return len(f.Sim.Guests()) >= 2 })
	p1.Kill(t)
	p2 := pe.StartProvider(t)
	f.waitReady(t, p2, "dropped")
	f.assertOneVM(t, "dropped")
}

// The provider dies while PVE's clone task runs (the new config exists,
// locked "clone", without our marker yet): the restarted provider waits for
// it as its own, and never picks another VMID.
func TestKilledWhileCloneTaskRuns(t *testing.T) {
	f := newFixtureWith(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmclone": 4 * time.Second}})
	p1 := pe.StartProvider(t)
	if err := f.Kube.Create(context.Background(), f.vm("slow")); err != nil {
		t.Fatal(err)
	}
	p1.WaitFor(t, "a clone under way", wait, func() bool {
		for _, g := range f.Sim.Guests() {
			if g.Lock == "clone" {
				return true
			}
		}
		return false
	})
	p1.Kill(t)
	p2 := pe.StartProvider(t)
	f.waitReady(t, p2, "slow")
	f.assertOneVM(t, "slow")
}

// The provider dies after it stored the picked VMID on the resource but
// before PVE applied the clone: the clone request is parked by the
// simulator (a latency rule) and then answered 500 without being applied,
// so after the kill the resource carries the VMID, create-pending and no
// guest. The restarted provider clones at that same VMID: one VM, Ready.
func TestKilledBetweenVMIDStoredAndClone(t *testing.T) {
	f := newFixture(t)
	f.Sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{
		Method: "POST", PathPattern: "/nodes/*/qemu/*/clone", Latency: time.Hour, ErrorRate: 1, Message: "never applied",
	}}})
	p1 := pe.StartProvider(t)
	if err := f.Kube.Create(context.Background(), f.vm("early")); err != nil {
		t.Fatal(err)
	}
	p1.WaitFor(t, "the clone request", wait, func() bool { return cloneRequests(f.Sim) > 0 })
	p1.Kill(t)
	// New requests go through; the parked one is answered 500, unapplied,
	// when the simulator closes.
	f.Sim.SetFaults(pvesim.Faults{})

	stored := &v1alpha1.VirtualMachine{}
	if err := f.Kube.Get(context.Background(), types.NamespacedName{Namespace: f.Namespace, Name: "early"}, stored); err != nil {
		t.Fatal(err)
	}
	vmid := stored.GetAnnotations()["crossplane.io/external-name"]
	if vmid == "" {
		t.Fatalf("no VMID stored before the clone request: annotations %v", stored.GetAnnotations())
	}
	if _, ok := stored.GetAnnotations()["crossplane.io/external-create-succeeded"]; ok {
		t.Fatalf("create recorded as succeeded although the clone was never answered: %v", stored.GetAnnotations())
	}
	if got := len(f.Sim.Guests()); got != 1 {
		t.Fatalf("guests after the kill = %d, want the template only", got)
	}

	p2 := pe.StartProvider(t)
	vm := f.waitReady(t, p2, "early")
	f.assertOneVM(t, "early")
	if got := vm.GetAnnotations()["crossplane.io/external-name"]; got != vmid {
		t.Errorf("external name = %s, want the VMID stored before the kill (%s)", got, vmid)
	}
	if _, ok := f.Sim.Guest(mustAtoi(t, vmid)); !ok {
		t.Errorf("no guest at the stored VMID %s", vmid)
	}
}

// cloneRequests counts the clone requests the simulator received (counted
// before any fault rule delays them).
func cloneRequests(sim *pvesim.Server) int {
	n := 0
	for ep, k := range sim.Counters().ByEndpoint {
		if strings.HasPrefix(ep, "POST ") && strings.HasSuffix(ep, "/clone") {
			n += k
		}
	}
	return n
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number: %v", s, err)
	}
	return n
}
