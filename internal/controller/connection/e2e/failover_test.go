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

// Package e2e runs a ProxmoxConnection with several endpoints end to end: a
// real kube-apiserver (testenv), the provider's manager in-process, and a
// simulated cluster served on two listeners, as two nodes' pveproxies.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	// wait bounds how long the provider may take to react; generous for a
	// busy 2-core machine.
	wait = 3 * time.Minute
	// poll is the provider's poll interval: drift must be corrected within
	// two of them while the first endpoint is down.
	poll     = 15 * time.Second
	node     = "pve1"
	tokenID  = "root@pam!failover"
	secret   = "failover-secret-canary"
	credNS   = "failover"
	credName = "failover-credentials"
	vms      = 50
)

var (
	env *testenv.Env
	h   *providertest.Harness
)

func TestMain(m *testing.M) {
	o := providertest.Options{
		Provider: provider.Options{PollInterval: poll, MaxReconcileRate: 10, EnableManagementPolicies: true},
		Sim:      pvesim.Options{Nodes: []string{node, "pve2"}, ExtraListen: []string{"127.0.0.1:0"}},
	}
	os.Exit(providertest.Main(m, "connection failover e2e", &env, o, func(_ context.Context, p *providertest.Harness) error {
		p.Sim.AddToken(tokenID, secret)
		h = p
		return nil
	}, func(p *providertest.Harness, code int) int {
		if strings.Contains(p.Logs.String(), secret) {
			fmt.Fprintln(os.Stderr, "FAIL: the provider logged the token secret")
			return 1
		}
		return code
	}))
}

// createConnection makes a connection whose endpoint is the simulator's
// first listener and whose endpoints are the others.
func createConnection(t *testing.T, name string) {
	t.Helper()
	ctx := t.Context()
	urls := h.Sim.URLs()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: credNS}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: credNS, Name: credName}, StringData: map[string]string{providertest.TokenSecretKey: secret}},
	} {
		if err := h.Kube.Create(ctx, o); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
	}
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ProxmoxConnectionSpec{
		Endpoint: urls[0], Endpoints: urls[1:], TokenID: tokenID, CABundle: string(h.Sim.CAPEM()),
		SecretFrom: &v1alpha1.SecretKeySelector{Name: credName, Namespace: credNS, Key: providertest.TokenSecretKey},
	}}
	if err := h.Kube.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Kube.Delete(context.Background(), pc) })
}

func connection(t *testing.T, name string) *v1alpha1.ProxmoxConnection {
	t.Helper()
	pc := &v1alpha1.ProxmoxConnection{}
	if err := h.Kube.Get(t.Context(), types.NamespacedName{Name: name}, pc); err != nil {
		t.Fatal(err)
	}
	return pc
}

// waitConnection waits until the connection's status satisfies cond.
func waitConnection(t *testing.T, name, what string, cond func(*v1alpha1.ProxmoxConnection) bool) *v1alpha1.ProxmoxConnection {
	t.Helper()
	var pc *v1alpha1.ProxmoxConnection
	providertest.Eventually(t, wait, 250*time.Millisecond, func() bool {
		pc = connection(t, name)
		return cond(pc)
	}, func() string {
		return fmt.Sprintf("ProxmoxConnection %s not %s after %s: status %+v", name, what, wait, pc.Status)
	})
	return pc
}

func healthOf(pc *v1alpha1.ProxmoxConnection) []v1alpha1.EndpointHealth {
	out := make([]v1alpha1.EndpointHealth, 0, len(pc.Status.Endpoints))
	for _, e := range pc.Status.Endpoints {
		out = append(out, e.Health)
	}
	return out
}

func readyReason(pc *v1alpha1.ProxmoxConnection) (corev1.ConditionStatus, xpv2.ConditionReason) {
	c := pc.Status.GetCondition(xpv2.TypeReady)
	return c.Status, c.Reason
}

func vmReady(vm *v1alpha1.VirtualMachine) bool {
	return vm.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue &&
		vm.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue
}

// seedVMs creates n VirtualMachines, each adopting a guest that already
// matches its spec and carries its ownership marker, so the test measures
// failover and not cloning.
func seedVMs(t *testing.T, ns, conn string, n int) map[string]int {
	t.Helper()
	ids := map[string]int{}
	base := freeVMIDs(t, n)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("fo-%02d", i)
		vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: conn}},
			Name:         name, NodeName: node,
			Template: &v1alpha1.VirtualMachineCloneSpec{Name: "debian-12", VirtualMachineHardware: v1alpha1.VirtualMachineHardware{
				Cores: 2, Socket: 1, Memory: 2048,
				Disk:    []v1alpha1.VirtualMachineDisk{{Storage: "local-lvm", Size: 16, Device: "scsi0"}},
				Network: []v1alpha1.VirtualMachineNetwork{{Model: "virtio", Bridge: "vmbr0"}},
			}},
		}}
		meta.SetExternalName(vm, strconv.Itoa(base+i))
		if err := h.Kube.Create(t.Context(), vm); err != nil {
			t.Fatal(err)
		}
		cfg := map[string]string{
			"name": name, "cores": "2", "sockets": "1", "memory": "2048", "scsi0": "local-lvm:16", "net0": "virtio,bridge=vmbr0",
			"description": "crossplane: " + ns + "/" + name + " uid=" + string(vm.UID),
		}
		if err := h.Sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: node, VMID: base + i, Config: cfg, Running: true}); err != nil {
			t.Fatal(err)
		}
		ids[name] = base + i
	}
	return ids
}

// freeVMIDs is the first VMID of n free ones in a row: the simulator
// outlives a run, and -count=2 finds the first run's guests.
func freeVMIDs(t *testing.T, n int) int {
	t.Helper()
	for start := 30000; start < 90000; start += n {
		free := true
		for id := start; id < start+n && free; id++ {
			_, taken := h.Sim.Guest(id)
			free = !taken
		}
		if free {
			return start
		}
	}
	t.Fatal("no free VMID range")
	return 0
}

// notReadyVMs lists the VirtualMachines of ns that are not Ready.
func notReadyVMs(t *testing.T, ns string) ([]string, int) {
	t.Helper()
	l := &v1alpha1.VirtualMachineList{}
	if err := h.Kube.List(t.Context(), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range l.Items {
		if !vmReady(&l.Items[i]) {
			out = append(out, l.Items[i].Name)
		}
	}
	return out, len(l.Items)
}

func TestFailoverKeepsVMsReadyAndCorrectsDrift(t *testing.T) {
	env.Require(t)
	if _, ok := h.Sim.Guest(9000); !ok {
		if err := h.Sim.AddTemplate(node, 9000, "debian-12"); err != nil {
			t.Fatal(err)
		}
	}
	conn := fmt.Sprintf("failover-%d", time.Now().UnixNano()%100000)
	createConnection(t, conn)
	pc := waitConnection(t, conn, "Ready with two healthy endpoints", func(pc *v1alpha1.ProxmoxConnection) bool {
		s, r := readyReason(pc)
		return s == corev1.ConditionTrue && r == v1alpha1.ReasonAvailable && fmt.Sprint(healthOf(pc)) == "[Healthy Healthy]"
	})
	urls := h.Sim.URLs()
	if pc.Status.Endpoints[0].URL != urls[0]+"/api2/json" || pc.Status.Endpoints[1].URL != urls[1]+"/api2/json" {
		t.Fatalf("status endpoints = %+v, want %v in order", pc.Status.Endpoints, urls)
	}

	ns := h.Namespace(t, "failover-")
	ids := seedVMs(t, ns, conn, vms)
	providertest.Eventually(t, wait, time.Second, func() bool {
		bad, total := notReadyVMs(t, ns)
		return total == vms && len(bad) == 0
	}, func() string {
		bad, total := notReadyVMs(t, ns)
		return fmt.Sprintf("%d/%d VirtualMachines not Ready: %v", len(bad), total, bad)
	})

	// The first endpoint goes away: refused connections, cut keep-alives.
	if err := h.Sim.ListenerDown(0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Sim.ListenerUp(0) })
	drifted := []string{"fo-03", "fo-17", "fo-42"}
	for _, name := range drifted {
		if err := h.Sim.SetGuestConfig(ids[name], "cores", "4"); err != nil {
			t.Fatal(err)
		}
	}
	driftAt := time.Now()

	// Every VM stays Ready throughout, and the drift is corrected through
	// the other endpoint within two poll intervals.
	for {
		if bad, _ := notReadyVMs(t, ns); len(bad) > 0 {
			t.Fatalf("%d VirtualMachines lost Ready with one endpoint down: %v", len(bad), bad)
		}
		corrected := 0
		for _, name := range drifted {
			if g, _ := h.Sim.Guest(ids[name]); g.Config["cores"] == "2" {
				corrected++
			}
		}
		if corrected == len(drifted) {
			t.Logf("drift on %d VMs corrected %s after it appeared, with the first endpoint down (poll interval %s)", len(drifted), time.Since(driftAt).Round(time.Second), poll)
			break
		}
		if time.Since(driftAt) > 2*poll {
			t.Fatalf("drift not corrected within two poll intervals (%s): %d/%d corrected", 2*poll, corrected, len(drifted))
		}
		time.Sleep(time.Second)
	}

	pc = waitConnection(t, conn, "Ready but Degraded with the first endpoint down", func(pc *v1alpha1.ProxmoxConnection) bool {
		s, r := readyReason(pc)
		return s == corev1.ConditionTrue && r == v1alpha1.ReasonDegraded && fmt.Sprint(healthOf(pc)) == "[Down Healthy]"
	})
	if msg := pc.Status.GetCondition(xpv2.TypeReady).Message; !strings.Contains(msg, urls[0]) {
		t.Errorf("Degraded message %q does not name the down endpoint %s", msg, urls[0])
	}
	if !pc.Status.Endpoints[1].Active || pc.Status.Endpoints[0].Message == "" {
		t.Errorf("status endpoints = %+v, want the second active and why the first is down", pc.Status.Endpoints)
	}
	raw, err := json.Marshal(pc.Status)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secret) {
		t.Fatal("the connection's status holds its token secret")
	}

	// Back: a probe finds it, requests return to it, status says healthy.
	if err := h.Sim.ListenerUp(0); err != nil {
		t.Fatal(err)
	}
	pc = waitConnection(t, conn, "Available with both endpoints healthy again", func(pc *v1alpha1.ProxmoxConnection) bool {
		s, r := readyReason(pc)
		return s == corev1.ConditionTrue && r == v1alpha1.ReasonAvailable && fmt.Sprint(healthOf(pc)) == "[Healthy Healthy]"
	})
	if bad, _ := notReadyVMs(t, ns); len(bad) > 0 {
		t.Errorf("VirtualMachines not Ready after the endpoint came back: %v", bad)
	}
	t.Logf("endpoints after recovery: %+v", pc.Status.Endpoints)
}
