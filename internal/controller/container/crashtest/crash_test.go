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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis"
	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	wait    = 120 * time.Second
	node    = "lowtower"
	archive = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
	tokenID = "root@pam!kubemox"
	// createEndpoint is how the simulator counts container creations.
	createEndpoint = "POST /nodes/{node}/lxc"
)

// pe is the API server and provider binary of this package.
var pe providertest.BinaryEnv

func TestMain(m *testing.M) { os.Exit(providertest.BinaryMain(m, &pe)) }

func startProvider(t *testing.T) *providertest.Process {
	t.Helper()
	return providertest.StartProcess(t, pe.Binary, pe.Kubeconfig, "--poll=5s", "--metrics-bind-address=0", "--health-probe-bind-address=", "--debug")
}

type fixture struct {
	kube client.Client
	sim  *pvesim.Server
	ns   string
	conn string
}

// newFixture starts a simulator with the template archive and a connection
// to it in the test's API server, and makes a namespace.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	pe.Env.Require(t)
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(pe.Env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	sim, err := pvesim.Start(pvesim.Options{Nodes: []string{node}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	sim.AddToken(tokenID, "crash-secret")
	if err := sim.AddVolume(node, archive); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ctcrash-"}}
	if err := kube.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{GenerateName: "ctcrash-"}, Spec: v1alpha1.ProxmoxConnectionSpec{
		Endpoint: sim.URL(), TokenID: tokenID, Secret: "crash-secret", CABundle: string(sim.CAPEM()),
	}}
	if err := kube.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), pc) })
	return &fixture{kube: kube, sim: sim, ns: ns.Name, conn: pc.Name}
}

func (f *fixture) container(name string) *v1alpha1.Container {
	return &v1alpha1.Container{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}, Spec: v1alpha1.ContainerSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: f.conn}},
		Name:         name, NodeName: node,
		Template: &v1alpha1.ContainerTemplate{OSTemplate: archive, Cores: 1, Memory: 512,
			Disk: []v1alpha1.ContainerDisk{{Storage: "local-lvm", Size: 2}}},
	}}
}

func (f *fixture) waitReady(t *testing.T, p *providertest.Process, name string) *v1alpha1.Container {
	t.Helper()
	cr := &v1alpha1.Container{}
	waitFor(t, p, name+" Ready and Synced", func() bool {
		err := f.kube.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: name}, cr)
		return err == nil && cr.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue && cr.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue
	})
	return cr
}

// waitFor polls cond until it holds, failing with the provider's log tail.
func waitFor(t *testing.T, p *providertest.Process, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s\nprovider log tail:\n%s", what, wait, p.Tail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertOneContainer checks the simulator holds exactly one guest, ours.
func (f *fixture) assertOneContainer(t *testing.T, name string) {
	t.Helper()
	guests := f.sim.Guests()
	if len(guests) != 1 {
		t.Fatalf("guests = %d, want 1", len(guests))
	}
	if g := guests[0]; g.Kind != "lxc" || !strings.Contains(g.Config["description"], "crossplane: "+f.ns+"/"+name+" uid=") {
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
	f.sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{
		Method: "POST", PathPattern: "/nodes/*/lxc", Latency: time.Hour, ErrorRate: 1, Message: "never applied",
	}}})
	p1 := startProvider(t)
	if err := f.kube.Create(context.Background(), f.container("early")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p1, "the create request", func() bool { return f.sim.Counters().ByEndpoint[createEndpoint] > 0 })
	p1.Kill(t)
	f.sim.SetFaults(pvesim.Faults{})

	stored := &v1alpha1.Container{}
	if err := f.kube.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "early"}, stored); err != nil {
		t.Fatal(err)
	}
	vmid := meta.GetExternalName(stored)
	if vmid == "" {
		t.Fatalf("no VMID stored before the create request: annotations %v", stored.GetAnnotations())
	}
	if n := len(f.sim.Guests()); n != 0 {
		t.Fatalf("guests after the kill = %d, want none", n)
	}
	p2 := startProvider(t)
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
	hold := f.sim.HoldResponse("POST", "/nodes/*/lxc")
	p1 := startProvider(t)
	if err := f.kube.Create(context.Background(), f.container("held")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.Held():
	case <-time.After(wait):
		t.Fatalf("the create request never arrived\nprovider log tail:\n%s", p1.Tail())
	}
	p1.Kill(t)
	hold.Release()
	p2 := startProvider(t)
	cr := f.waitReady(t, p2, "held")
	f.assertOneContainer(t, "held")
	if cr.Status.Status.State != "running" {
		t.Errorf("state = %q, want running", cr.Status.Status.State)
	}
}
