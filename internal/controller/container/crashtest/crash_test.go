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

// Package crashtest SIGKILLs the provider binary at a Container's riskiest
// moments (after its VMID is stored, before or while PVE creates the
// container) and checks a restarted provider ends with exactly one
// container, Ready without help. It has its own API server: the provider
// runs as a subprocess here.
package crashtest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	wait    = 120 * time.Second
	node    = "lowtower"
	archive = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
	// createEndpoint is how the simulator counts container creations.
	createEndpoint = "POST /nodes/{node}/lxc"
)

// pe is the API server and provider binary of this package.
var pe providertest.BinaryEnv

func TestMain(m *testing.M) { os.Exit(providertest.BinaryMain(m, &pe)) }

type fixture struct{ *providertest.SimFixture }

// newFixture starts a simulator with the template archive and a connection
// to it in the test's API server, and makes a namespace.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	sf := pe.NewSimFixture(t, "ctcrash", pvesim.Options{Nodes: []string{node}})
	if err := sf.Sim.AddVolume(node, archive); err != nil {
		t.Fatal(err)
	}
	return &fixture{sf}
}

func (f *fixture) container(name string) *v1alpha1.Container {
	return &v1alpha1.Container{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: name}, Spec: v1alpha1.ContainerSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: f.Connection}},
		Name:         name, NodeName: node,
		Template: &v1alpha1.ContainerTemplate{OSTemplate: archive, Cores: 1, Memory: 512,
			Disk: []v1alpha1.ContainerDisk{{Storage: "local-lvm", Size: 2}}},
	}}
}

func (f *fixture) waitReady(t *testing.T, p *providertest.Process, name string) *v1alpha1.Container {
	t.Helper()
	cr := &v1alpha1.Container{ObjectMeta: metav1.ObjectMeta{Name: name}}
	f.WaitReady(t, p, cr, wait)
	return cr
}

// assertOneContainer checks the simulator holds exactly one guest, ours.
func (f *fixture) assertOneContainer(t *testing.T, name string) {
	t.Helper()
	guests := f.Sim.Guests()
	if len(guests) != 1 {
		t.Fatalf("guests = %d, want 1", len(guests))
	}
	if g := guests[0]; g.Kind != "lxc" || !strings.Contains(g.Config["description"], "crossplane: "+f.Namespace+"/"+name+" uid=") {
		t.Errorf("the guest is not our container: %+v", g)
	}
}

// The provider dies after it stored the picked VMID on the resource but
// before PVE created anything: the create request is parked (a latency
// rule) and never applied, so after the kill the resource carries the
// VMID and no container exists. The restarted provider creates at that same
// VMID: one container, Ready.
func TestKilledBetweenVMIDStoredAndCreate(t *testing.T) {
	f := newFixture(t)
	f.Sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{
		Method: "POST", PathPattern: "/nodes/*/lxc", Latency: time.Hour, ErrorRate: 1, Message: "never applied",
	}}})
	p1 := pe.StartProvider(t)
	if err := f.Kube.Create(context.Background(), f.container("early")); err != nil {
		t.Fatal(err)
	}
	p1.WaitFor(t, "the create request", wait, func() bool { return f.Sim.Counters().ByEndpoint[createEndpoint] > 0 })
	p1.Kill(t)
	f.Sim.SetFaults(pvesim.Faults{})

	stored := &v1alpha1.Container{}
	if err := f.Kube.Get(context.Background(), types.NamespacedName{Namespace: f.Namespace, Name: "early"}, stored); err != nil {
		t.Fatal(err)
	}
	vmid := meta.GetExternalName(stored)
	if vmid == "" {
		t.Fatalf("no VMID stored before the create request: annotations %v", stored.GetAnnotations())
	}
	if n := len(f.Sim.Guests()); n != 0 {
		t.Fatalf("guests after the kill = %d, want none", n)
	}
	p2 := pe.StartProvider(t)
	cr := f.waitReady(t, p2, "early")
	f.assertOneContainer(t, "early")
	if got := meta.GetExternalName(cr); got != vmid {
		t.Errorf("external name = %s, want the VMID stored before the kill (%s)", got, vmid)
	}
}

// The provider dies while PVE has applied the create but its answer has not
// arrived: the restarted provider finds the container at the VMID recorded
// before the call and makes no second one.
func TestKilledWhileCreateResponseHeld(t *testing.T) {
	f := newFixture(t)
	f.KillWhileAnswerHeld(t, &pe, "POST", "/nodes/*/lxc", f.container("held"), wait)
	p2 := pe.StartProvider(t)
	cr := f.waitReady(t, p2, "held")
	f.assertOneContainer(t, "held")
	if cr.Status.Status.State != "running" {
		t.Errorf("state = %q, want running", cr.Status.Status.State)
	}
}
