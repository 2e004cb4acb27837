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
	"strconv"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A GuestImport selecting a pool and a tag makes an Observe-only
// VirtualMachine per matching VM (not the template, the container, the one a
// resource already names, nor the one another resource's marker claims);
// switching one to full management writes exactly the marker; a second
// import over the same guests creates nothing; deleting the import keeps the
// resources.
func TestGuestImport(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	other := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: hs.namespace(t), Name: "held"}}
	// A pool and VMIDs of this run's own, so a second run (-count=2) meets
	// none of the first's guests.
	pool, base := ns, freeVMIDBlock(hs.Sim)
	id := func(i int) int { return base + i }
	seeds := []pvesim.GuestSeed{
		{VMID: id(1), Running: true, Pool: pool, Config: map[string]string{"name": "Web.01", "tags": "web;linux", "cores": "2", "sockets": "1", "memory": "2048",
			"scsi0": "local-lvm:16", "net0": "virtio,bridge=vmbr0", "ide2": "local-lvm:cloudinit,media=cdrom"}},
		{VMID: id(2), Pool: pool, Config: map[string]string{"name": "web-02", "tags": "web", "cores": "1", "memory": "1024", "scsi0": "local-lvm:8"}},
		{VMID: id(3), Pool: pool, Config: map[string]string{"name": "db-01", "tags": "db"}},
		{VMID: id(4), Pool: pool + "-dev", Config: map[string]string{"name": "web-dev", "tags": "web"}},
		{VMID: id(5), Pool: pool, Template: true, Config: map[string]string{"name": "web-tpl", "tags": "web"}},
		{VMID: id(6), Kind: "lxc", Pool: pool, Config: map[string]string{"hostname": "web-ct", "tags": "web", "rootfs": "local-lvm:4"}},
		{VMID: id(7), Pool: pool, Config: map[string]string{"name": "web-held", "tags": "web"}},
		{VMID: id(8), Pool: pool, Config: map[string]string{"name": "web-owned", "tags": "web", "description": "crossplane: elsewhere/web uid=1234"}},
	}
	for _, s := range seeds {
		s.Node = node
		if err := hs.Sim.AddGuest(s); err != nil {
			t.Fatal(err)
		}
	}
	other.Spec.ResourceSpec = v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName},
		ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}}
	meta.SetExternalName(other, strconv.Itoa(id(7)))
	hs.create(t, other)

	gi := &v1alpha1.GuestImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod-web"}, Spec: v1alpha1.GuestImportSpec{
		ConnectionRef: &v1alpha1.ConnectionReference{Name: connName},
		Selector:      v1alpha1.GuestSelector{Pools: []string{pool}, Tags: []string{"web"}},
	}}
	if err := hs.Kube.Create(context.Background(), gi); err != nil {
		t.Fatal(err)
	}
	gi = waitImportRun(t, hs, ns, gi.Name, 1)
	if st := gi.Status; st.Matched != 4 || st.Imported != 2 || st.Skipped != 2 || st.Failed != 0 {
		t.Fatalf("status %+v; want 4 matched, 2 imported, 2 skipped", st)
	}
	reasons := map[int64]string{}
	for _, g := range gi.Status.Guests {
		reasons[g.VMID] = g.Reason
	}
	if !strings.Contains(reasons[int64(id(7))], "already named by VirtualMachine "+other.Namespace+"/held") || !strings.Contains(reasons[int64(id(8))], "elsewhere/web") {
		t.Errorf("skip reasons %v", reasons)
	}

	web01 := hs.waitReady(t, ns, "web-01")
	web02 := hs.waitReady(t, ns, "web-02")
	for _, vm := range []*v1alpha1.VirtualMachine{web01, web02} {
		if p := vm.GetManagementPolicies(); len(p) != 1 || p[0] != xpv2.ManagementActionObserve || len(vm.OwnerReferences) != 0 {
			t.Errorf("%s: policies %v, owners %v; want Observe only and no owner", vm.Name, p, vm.OwnerReferences)
		}
	}
	if web02.Spec.AutoStart() {
		t.Error("the stopped guest's resource would start it (enableAutoStart)")
	}

	// Full management of web-01 writes only the marker.
	hs.Sim.ResetCounters()
	patch := []byte(`{"spec":{"managementPolicies":["*"]}}`)
	if err := hs.Kube.Patch(context.Background(), web01, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for {
		g, _ := hs.Sim.Guest(id(1))
		if m, ok := guest.ParseMarker(g.Config["description"]); ok && m.Name == "web-01" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the marker was never written: %q", g.Config["description"])
		}
		time.Sleep(200 * time.Millisecond)
	}
	hs.waitReady(t, ns, "web-01")
	time.Sleep(3 * time.Second) // any further write would follow at once
	if w := writes(hs.Sim.Counters()); len(w) != 1 || w["PUT /nodes/{node}/qemu/{vmid}/config"] != 1 {
		t.Errorf("writes to Proxmox VE while taking the guest under management: %v; want exactly one config PUT (the marker)", w)
	}
	if g, _ := hs.Sim.Guest(id(1)); g.Config["cores"] != "2" || g.Status != "running" {
		t.Errorf("the guest changed: %+v", g)
	}

	// A second import over the same guests creates nothing.
	again := &v1alpha1.GuestImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "again"}, Spec: gi.Spec}
	again.Spec.ManagementPolicies = nil
	if err := hs.Kube.Create(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	again = waitImportRun(t, hs, ns, again.Name, 1)
	if st := again.Status; st.Imported != 0 || st.Skipped != 4 {
		t.Errorf("second import: %+v; want nothing imported, all 4 skipped", st)
	}

	// The first import, run again, finds its own resources.
	patch = []byte(`{"spec":{"interval":"1h"}}`)
	if err := hs.Kube.Patch(context.Background(), gi, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	gi = waitImportRun(t, hs, ns, gi.Name, 2)
	if st := gi.Status; st.Imported != 0 || st.Existing != 2 {
		t.Errorf("re-run: %+v; want the 2 resources found, none created", st)
	}

	// Deleting the import keeps what it made.
	if err := hs.Kube.Delete(context.Background(), gi); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web-02"}, &v1alpha1.VirtualMachine{}); kerrors.IsNotFound(err) {
		t.Error("deleting the import deleted its resources")
	}
}

// freeVMIDBlock is the first VMID of a block of 100 no guest uses yet.
func freeVMIDBlock(sim *pvesim.Server) int {
	highest := 2000
	for _, g := range sim.Guests() {
		highest = max(highest, g.VMID)
	}
	return (highest/100 + 1) * 100
}

// waitImportRun waits until the import has run for generation gen.
func waitImportRun(t *testing.T, hs *harness, ns, name string, gen int64) *v1alpha1.GuestImport {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		gi := &v1alpha1.GuestImport{}
		err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, gi)
		if err == nil && gi.Status.LastRun != nil && gi.Status.ObservedGeneration >= gen {
			return gi
		}
		if time.Now().After(deadline) {
			t.Fatalf("import %s did not run (generation %d): %+v, %v", name, gen, gi.Status, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// writes are the counted requests that change something in Proxmox VE
// (logins aside).
func writes(c pvesim.Counters) map[string]int {
	out := map[string]int{}
	for k, n := range c.ByEndpoint {
		if !strings.HasPrefix(k, "GET ") && !strings.Contains(k, "/access/ticket") {
			out[k] = n
		}
	}
	return out
}
