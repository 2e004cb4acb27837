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
	"os"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// BenchmarkSteadyStateCost measures Proxmox requests per VM per poll with
// N VirtualMachines (default 500, env VM_BENCH_N) Ready and in sync: each
// poll should cost one GET /pending plus a 1/N share of one
// /cluster/resources read per connection. Run with
//
//	go test ./internal/controller/virtualmachine/e2e/ -run '^$' -bench SteadyState -benchtime 1x
func BenchmarkSteadyStateCost(b *testing.B) {
	if env == nil {
		b.Skip("integration tests are disabled")
	}
	n := 500
	if v, err := strconv.Atoi(os.Getenv("VM_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	hs := h
	ctx := context.Background()
	ns := &metav1.ObjectMeta{GenerateName: "bench-"}
	nsObj := newNamespace(b, ns)
	// Guests that already match their spec, carrying each resource's marker:
	// the benchmark measures polling, not creation.
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("b-%03d", i)
		vmid := 20000 + i
		spec := cloneSpec(name)
		// Every VM publishes connection details: no Secret informer may
		// appear for it (TestMain checks the API server saw no full Secret
		// list or watch).
		spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name + "-conn"}
		vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: nsObj, Name: name}, Spec: spec}
		meta.SetExternalName(vm, strconv.Itoa(vmid))
		if err := hs.Kube.Create(ctx, vm); err != nil {
			b.Fatal(err)
		}
		cfg := map[string]string{
			"name": name, "cores": "2", "sockets": "1", "memory": "2048", "scsi0": "local-lvm:16", "net0": "virtio,bridge=vmbr0",
			"description": "crossplane: " + nsObj + "/" + name + " uid=" + string(vm.UID),
		}
		if err := hs.Sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: node, VMID: vmid, Config: cfg, Running: true}); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		l := &v1alpha1.VirtualMachineList{}
		if err := hs.Kube.List(ctx, l, client.InNamespace(nsObj)); err != nil {
			b.Fatal(err)
		}
		readyCount := 0
		for i := range l.Items {
			if ready(&l.Items[i]) {
				readyCount++
			}
		}
		if readyCount == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d/%d Ready", readyCount, n)
		}
		time.Sleep(time.Second)
	}
	// Let every resource fall back to the poll interval, then measure over
	// whole polls.
	time.Sleep(poll)
	b.ResetTimer()
	var requests, polls, resources, connection int
	for i := 0; i < b.N; i++ {
		hs.Sim.ResetCounters()
		time.Sleep(3 * poll)
		c := hs.Sim.Counters()
		for ep, k := range c.ByEndpoint {
			requests += k
			switch ep {
			case "GET /cluster/resources":
				resources += k
			case "GET /version":
				// The ProxmoxConnection's own credential check, not a VM's.
				connection += k
			}
		}
		polls += c.ByEndpoint[pendingEndpoint]
	}
	b.StopTimer()
	if polls == 0 {
		b.Fatal("no polls measured")
	}
	perPoll := float64(requests-connection) / float64(polls)
	b.ReportMetric(perPoll, "requests/VM/poll")
	b.ReportMetric(1+1/float64(n), "budget")
	c := hs.Sim.Counters()
	eps := make([]string, 0, len(c.ByEndpoint))
	for ep, k := range c.ByEndpoint {
		eps = append(eps, fmt.Sprintf("%s=%d", ep, k))
	}
	sort.Strings(eps)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	secrets := &corev1.SecretList{}
	if err := hs.Kube.List(ctx, secrets, client.InNamespace(nsObj)); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("heap in use after GC (provider, simulator and test in one process): %d MiB; connection-detail Secrets: %d; full Secret lists/watches so far: %d\n",
		ms.HeapInuse>>20, len(secrets.Items), len(hs.Requests.FullSecretListsOrWatches()))
	fmt.Printf("steady state, %d VMs on one connection: %d VM requests over %d polls = %.4f requests/VM/poll (budget 1+1/N = %.4f); "+
		"/cluster/resources reads: %d; connection checks (GET /version, not counted): %d; last window: %v\n",
		n, requests-connection, polls, perPoll, 1+1/float64(n), resources, connection, eps)
}

func newNamespace(b *testing.B, m *metav1.ObjectMeta) string {
	b.Helper()
	ns := &corev1.Namespace{ObjectMeta: *m}
	if err := h.Kube.Create(context.Background(), ns); err != nil {
		b.Fatal(err)
	}
	return ns.Name
}
