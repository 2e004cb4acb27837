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

// Package hatest runs two and three replicas of the provider binary with
// leader election against one API server and one simulator: a killed
// leader is replaced within the lease duration, a frozen leader that lost
// its lease sends Proxmox VE nothing when it resumes, and no VM is ever
// created twice or destroyed.
package hatest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	node         = "lowtower"
	templateName = "debian-12"
	tokenID      = "root@pam!ha"
	tokenSecret  = "ha-secret-4c1e"
	vms          = 10
	wait         = 180 * time.Second

	// Short leases keep the test quick; the ratios are the defaults'.
	leaseDuration = 8 * time.Second
	renewDeadline = 6 * time.Second
	retryPeriod   = time.Second
	leaseNS       = "default"
)

var pe providertest.BinaryEnv

func TestMain(m *testing.M) { os.Exit(providertest.BinaryMain(m, &pe)) }

type fixture struct {
	kube client.Client
	sim  *pvesim.Server
	ns   string
	conn string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	pe.Env.Require(t)
	kube, err := providertest.NewClient(pe.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := pvesim.Start(pvesim.Options{Nodes: []string{node}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	sim.AddToken(tokenID, tokenSecret)
	if err := sim.AddTemplate(node, 9000, templateName); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ha-"}}
	if err := kube.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{GenerateName: "ha-"}, Spec: v1alpha1.ProxmoxConnectionSpec{
		Endpoint: sim.URL(), TokenID: tokenID, Secret: tokenSecret, CABundle: string(sim.CAPEM()),
	}}
	if err := kube.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), pc) })
	return &fixture{kube: kube, sim: sim, ns: ns.Name, conn: pc.Name}
}

// replica starts one provider with leader election.
func replica(t *testing.T) *providertest.Process {
	t.Helper()
	return providertest.StartProcess(t, pe.Binary, pe.Kubeconfig, "--poll=5s", "--metrics-bind-address=0", "--health-probe-bind-address=",
		"--leader-election", "--leader-election-namespace="+leaseNS,
		"--leader-election-lease-duration="+leaseDuration.String(), "--leader-election-renew-deadline="+renewDeadline.String(),
		"--leader-election-retry-period="+retryPeriod.String())
}

// holder is the identity holding the provider's Lease, "" when none.
func (f *fixture) holder(t *testing.T) string {
	t.Helper()
	l := &coordinationv1.Lease{}
	err := f.kube.Get(context.Background(), types.NamespacedName{Namespace: leaseNS, Name: provider.LeaderElectionID}, l)
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitHolder waits until the Lease names a holder other than not, and
// returns it with how long that took.
func (f *fixture) waitHolder(t *testing.T, not string, logs ...*providertest.Process) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		if h := f.holder(t); h != "" && h != not {
			return h, time.Since(start)
		}
		if time.Since(start) > wait {
			t.Fatalf("no new leader (other than %q) after %s\n%s", not, wait, tails(logs))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tails(ps []*providertest.Process) string {
	var b strings.Builder
	for i, p := range ps {
		fmt.Fprintf(&b, "--- replica %d (exited %v) log tail:\n%s\n", i, p.Exited(), p.Tail())
	}
	return b.String()
}

func (f *fixture) createVMs(t *testing.T, prefix string, n int) {
	t.Helper()
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}, Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: f.conn}},
			Name:         name, NodeName: node,
			Template: &v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 1024}},
		}}
		if err := f.kube.Create(context.Background(), vm); err != nil {
			t.Fatal(err)
		}
	}
}

// waitAllReady waits until every VM of the namespace is Ready and Synced.
func (f *fixture) waitAllReady(t *testing.T, want int, logs ...*providertest.Process) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		l := &v1alpha1.VirtualMachineList{}
		err := f.kube.List(context.Background(), l, client.InNamespace(f.ns))
		ready := 0
		for i := range l.Items {
			vm := &l.Items[i]
			if vm.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue && vm.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue {
				ready++
			}
		}
		if err == nil && ready == want && len(l.Items) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d VMs Ready after %s (list error %v)\n%s", ready, want, wait, err, tails(logs))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// guests maps each resource name to the VMIDs of the guests carrying its
// marker.
func (f *fixture) guests() map[string][]int {
	out := map[string][]int{}
	for _, g := range f.sim.Guests() {
		_, rest, ok := strings.Cut(g.Config["description"], "crossplane: "+f.ns+"/")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, " ")
		out[name] = append(out[name], g.VMID)
	}
	return out
}

// assertOneGuestEach checks each of want resources has exactly one guest,
// and that every guest seen before is still there (nothing destroyed).
func (f *fixture) assertOneGuestEach(t *testing.T, want int, before map[string][]int) map[string][]int {
	t.Helper()
	now := f.guests()
	if len(now) != want {
		t.Errorf("%d resources have guests, want %d", len(now), want)
	}
	for name, ids := range now {
		if len(ids) != 1 {
			t.Errorf("resource %s has %d guests %v, want 1", name, len(ids), ids)
		}
	}
	for name, ids := range before {
		if fmt.Sprint(now[name]) != fmt.Sprint(ids) {
			t.Errorf("resource %s: guests %v became %v", name, ids, now[name])
		}
	}
	return now
}

func requests(c pvesim.Counters) int {
	n := 0
	for _, v := range c.ByEndpoint {
		n += v
	}
	return n
}

// TestFailover: (a) the leader is SIGKILLed: the standby takes over within
// the lease duration and the VMs keep converging; (b) the new leader is
// frozen (SIGSTOP) past its lease, a third replica takes over, and the
// frozen one, resumed, sends Proxmox VE no request and stops leading.
// No VM is created twice or destroyed throughout.
func TestFailover(t *testing.T) {
	f := newFixture(t)
	p1 := replica(t)
	h1, _ := f.waitHolder(t, "", p1)
	p2 := replica(t)

	f.createVMs(t, "before", vms)
	f.waitAllReady(t, vms, p1, p2)
	seen := f.assertOneGuestEach(t, vms, nil)

	// (a) SIGKILL: the lease is not released, so the standby waits for it to
	// expire: the lease duration (and a retry period or two) after the
	// kill.
	p1.Kill(t)
	h2, took := f.waitHolder(t, h1, p2)
	t.Logf("takeover after SIGKILL of the leader: %s (lease %s, retry %s)", took.Round(time.Millisecond), leaseDuration, retryPeriod)
	if limit := leaseDuration + 3*retryPeriod; took > limit {
		t.Errorf("the standby took over %s after the leader was killed, want within %s", took, limit)
	}
	f.createVMs(t, "after-kill", vms/2)
	f.waitAllReady(t, vms+vms/2, p2)
	seen = f.assertOneGuestEach(t, vms+vms/2, seen)

	// (b) SIGSTOP the leader past its lease; a third replica takes over.
	p3 := replica(t)
	p2.Signal(t, syscall.SIGSTOP)
	h3, took := f.waitHolder(t, h2, p2, p3)
	t.Logf("takeover from a frozen leader: %s", took.Round(time.Millisecond))
	// Freeze the new leader briefly (well within its lease) so every
	// request the simulator sees while the old leader resumes is the old
	// leader's.
	p3.Signal(t, syscall.SIGSTOP)
	time.Sleep(300 * time.Millisecond)
	f.sim.ResetCounters()
	p2.Signal(t, syscall.SIGCONT)
	resumed := time.Now()
	for !p2.Exited() && time.Since(resumed) < 3*time.Second {
		time.Sleep(50 * time.Millisecond)
	}
	byOld := f.sim.Counters()
	p3.Signal(t, syscall.SIGCONT)
	if n := requests(byOld); n != 0 {
		t.Errorf("the resumed replica that lost its lease sent Proxmox VE %d requests: %v", n, byOld.ByEndpoint)
	}
	// Its renew loop gives up within the renew deadline; controller-runtime
	// then stops the manager and the binary exits.
	for !p2.Exited() && time.Since(resumed) < renewDeadline+3*retryPeriod {
		time.Sleep(50 * time.Millisecond)
	}
	if !p2.Exited() {
		t.Errorf("the replica that lost its lease still runs %s after it resumed\n%s", time.Since(resumed), tails([]*providertest.Process{p2}))
	}
	t.Logf("resumed old leader exited after %s with code %d", time.Since(resumed).Round(time.Millisecond), p2.ExitCode())

	if h := f.holder(t); h != h3 {
		t.Errorf("lease holder after the old leader resumed = %q, want the new leader %q", h, h3)
	}

	f.createVMs(t, "after-stop", vms/2)
	f.waitAllReady(t, 2*vms, p3)
	f.assertOneGuestEach(t, 2*vms, seen)
}
