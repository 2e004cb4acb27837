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

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// importSeeds are the guests of an import test: 200 in a block of VMIDs of
// this run's own (so a second run, -count=2, meets none of the first's),
// most in the run's pool and tagged web. special are the ones the test
// looks at by VMID; the rest are VMs and containers, a fifth of which the
// import selects.
func importSeeds(pool string, id func(int) int) []pvesim.GuestSeed {
	seeds := []pvesim.GuestSeed{
		{VMID: id(1), Running: true, Pool: pool, Config: map[string]string{"name": "Web.01", "tags": "web;linux", "cores": "2", "sockets": "1", "memory": "2048",
			"scsi0": "local-lvm:16", "net0": "virtio,bridge=vmbr0", "ide2": "local-lvm:cloudinit,media=cdrom"}},
		{VMID: id(2), Pool: pool, Config: map[string]string{"name": "web-02", "tags": "web", "cores": "1", "memory": "1024", "scsi0": "local-lvm:8"}},
		{VMID: id(3), Pool: pool, Config: map[string]string{"name": "db-01", "tags": "db"}},
		{VMID: id(4), Pool: pool + "-dev", Config: map[string]string{"name": "web-dev", "tags": "web"}},
		{VMID: id(5), Pool: pool, Template: true, Config: map[string]string{"name": "web-tpl", "tags": "web"}},
		{VMID: id(6), Kind: "lxc", Running: true, Pool: pool, Config: map[string]string{"hostname": "web-ct", "tags": "web", "cores": "2", "memory": "1024",
			"swap": "256", "features": "nesting=1", "rootfs": "local-lvm:4", "mp0": "local-lvm:2,mp=/srv/data",
			"net0": "name=eth0,bridge=vmbr0,ip=192.0.2.60/24,gw=192.0.2.1,tag=20,type=veth"}},
		{VMID: id(7), Pool: pool, Config: map[string]string{"name": "web-held", "tags": "web"}},
		{VMID: id(8), Pool: pool, Config: map[string]string{"name": "web-owned", "tags": "web", "description": "crossplane: elsewhere/web uid=1234"}},
		{VMID: id(9), Kind: "lxc", Pool: pool, Config: map[string]string{"hostname": "ct-held", "tags": "web", "rootfs": "local-lvm:1"}},
		{VMID: id(10), Kind: "lxc", Pool: pool, Template: true, Config: map[string]string{"hostname": "ct-tpl", "tags": "web", "rootfs": "local-lvm:1"}},
	}
	for i := 11; i <= 200; i++ {
		p, tags := pool, "web"
		switch i % 5 {
		case 1:
			p = pool + "-dev"
		case 2:
			tags = "batch"
		case 3:
			p = ""
		case 4:
			p, tags = pool+"-dev", "batch"
		}
		s := pvesim.GuestSeed{VMID: id(i), Running: i%3 == 0, Pool: p}
		if i%2 == 0 {
			s.Config = map[string]string{"name": "bulk-vm-" + strconv.Itoa(i), "tags": tags, "cores": "1", "memory": "512", "scsi0": "local-lvm:1", "net0": "virtio,bridge=vmbr0"}
		} else {
			s.Kind = "lxc"
			s.Config = map[string]string{"hostname": "bulk-ct-" + strconv.Itoa(i), "tags": tags, "cores": "1", "memory": "256",
				"rootfs": "local-lvm:1", "net0": "name=eth0,bridge=vmbr0,ip=dhcp,type=veth"}
		}
		seeds = append(seeds, s)
	}
	return seeds
}

// Guests the import selects among importSeeds: the special ones (1, 2, 6
// imported; 7, 8, 9 skipped) and the bulk ones whose number a fifth divides
// (19 VMs, 19 containers).
const (
	importMatched  = 44
	importImported = 41
	importSkipped  = 3
)

// A GuestImport selecting a pool and a tag among 200 guests makes an
// Observe-only VirtualMachine per matching VM and Container per matching
// container (not the templates, the guests outside the pool or without the
// tag, the ones a resource already names, nor the one another resource's
// marker claims), all Ready; switching a VM and a container to full
// management writes exactly the marker each; a second import over the same
// guests creates nothing; deleting the import keeps the resources.
func TestGuestImport(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	otherNS := hs.namespace(t)
	pool, base := ns, freeVMIDBlock(hs.Sim)
	id := func(i int) int { return base + i }
	for _, s := range importSeeds(pool, id) {
		s.Node = node
		if err := hs.Sim.AddGuest(s); err != nil {
			t.Fatal(err)
		}
	}
	observe := v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName},
		ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}}
	held := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: otherNS, Name: "held"}, Spec: v1alpha1.VirtualMachineSpec{ResourceSpec: observe}}
	meta.SetExternalName(held, strconv.Itoa(id(7)))
	hs.create(t, held)
	ctHeld := &v1alpha1.Container{ObjectMeta: metav1.ObjectMeta{Namespace: otherNS, Name: "ct-held"}, Spec: v1alpha1.ContainerSpec{ResourceSpec: observe}}
	meta.SetExternalName(ctHeld, strconv.Itoa(id(9)))
	if err := hs.Kube.Create(context.Background(), ctHeld); err != nil {
		t.Fatal(err)
	}

	gi := &v1alpha1.GuestImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod-web"}, Spec: v1alpha1.GuestImportSpec{
		ConnectionRef: &v1alpha1.ConnectionReference{Name: connName},
		Selector: v1alpha1.GuestSelector{Pools: []string{pool}, Tags: []string{"web"},
			Types: []v1alpha1.ImportGuestType{v1alpha1.ImportGuestQEMU, v1alpha1.ImportGuestLXC}},
	}}
	if err := hs.Kube.Create(context.Background(), gi); err != nil {
		t.Fatal(err)
	}
	gi = waitImportRun(t, hs, ns, gi.Name, 1)
	if st := gi.Status; st.Matched != importMatched || st.Imported != importImported || st.Skipped != importSkipped || st.Failed != 0 {
		t.Fatalf("status %+v; want %d matched, %d imported, %d skipped", st, importMatched, importImported, importSkipped)
	}
	reasons := map[int64]string{}
	for _, g := range gi.Status.Guests {
		reasons[g.VMID] = g.Reason
	}
	if !strings.Contains(reasons[int64(id(7))], "already named by VirtualMachine "+otherNS+"/held") ||
		!strings.Contains(reasons[int64(id(8))], "elsewhere/web") ||
		!strings.Contains(reasons[int64(id(9))], "already named by Container "+otherNS+"/ct-held") {
		t.Errorf("skip reasons %v", reasons)
	}
	waitImportedReady(t, hs, ns, gi.Name)

	web01 := hs.waitReady(t, ns, "web-01")
	if web02 := hs.waitReady(t, ns, "web-02"); web02.Spec.AutoStart() {
		t.Error("the stopped guest's resource would start it (enableAutoStart)")
	}
	webCT := &v1alpha1.Container{}
	if err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web-ct"}, webCT); err != nil {
		t.Fatal(err)
	}
	if tpl := webCT.Spec.Template; webCT.Spec.Name != "web-ct" || tpl == nil || tpl.Cores != 2 || len(tpl.Disk) != 2 || len(tpl.Network) != 1 || tpl.Network[0].VLAN != 20 {
		t.Errorf("the container's spec does not describe it: %+v", webCT.Spec)
	}

	// Full management of web-01 and of web-ct writes only the marker each.
	takeOver(t, hs, web01, `["*"]`, id(1), "web-01", "PUT /nodes/{node}/qemu/{vmid}/config")
	takeOver(t, hs, webCT, `["Observe","Update","LateInitialize"]`, id(6), "web-ct", "PUT /nodes/{node}/lxc/{vmid}/config")
	if g, _ := hs.Sim.Guest(id(1)); g.Config["cores"] != "2" || g.Status != "running" {
		t.Errorf("the VM changed: %+v", g)
	}
	if g, _ := hs.Sim.Guest(id(6)); g.Config["cores"] != "2" || g.Config["net0"] == "" || !strings.Contains(g.Config["net0"], "tag=20") || g.Status != "running" {
		t.Errorf("the container changed: %+v", g)
	}

	// A second import over the same guests creates nothing.
	again := &v1alpha1.GuestImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "again"}, Spec: gi.Spec}
	again.Spec.ManagementPolicies = nil
	if err := hs.Kube.Create(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	again = waitImportRun(t, hs, ns, again.Name, 1)
	if st := again.Status; st.Imported != 0 || st.Skipped != importMatched {
		t.Errorf("second import: %+v; want nothing imported, all %d skipped", st, importMatched)
	}

	// The first import, run again, finds its own resources.
	patch := []byte(`{"spec":{"interval":"1h"}}`)
	if err := hs.Kube.Patch(context.Background(), gi, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	gi = waitImportRun(t, hs, ns, gi.Name, 2)
	if st := gi.Status; st.Imported != 0 || st.Existing != importImported {
		t.Errorf("re-run: %+v; want the %d resources found, none created", st, importImported)
	}

	// Deleting the import keeps what it made.
	if err := hs.Kube.Delete(context.Background(), gi); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web-02"}, &v1alpha1.VirtualMachine{}); kerrors.IsNotFound(err) {
		t.Error("deleting the import deleted its resources")
	}
	if err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web-ct"}, &v1alpha1.Container{}); kerrors.IsNotFound(err) {
		t.Error("deleting the import deleted its containers")
	}
}

// waitImportedReady waits until every resource the import made is Ready,
// Observe-only and without an owner reference.
func waitImportedReady(t *testing.T, hs *harness, ns, importName string) {
	t.Helper()
	sel := client.MatchingLabels{"proxmox.alperen.cloud/guest-import": importName}
	deadline := time.Now().Add(3 * wait)
	for {
		vms, cts := &v1alpha1.VirtualMachineList{}, &v1alpha1.ContainerList{}
		if err := hs.Kube.List(context.Background(), vms, client.InNamespace(ns), sel); err != nil {
			t.Fatal(err)
		}
		if err := hs.Kube.List(context.Background(), cts, client.InNamespace(ns), sel); err != nil {
			t.Fatal(err)
		}
		all := make([]resource.Managed, 0, len(vms.Items)+len(cts.Items))
		for i := range vms.Items {
			all = append(all, &vms.Items[i])
		}
		for i := range cts.Items {
			all = append(all, &cts.Items[i])
		}
		notReady := 0
		for _, mg := range all {
			p := mg.(resource.ModernManaged).GetManagementPolicies()
			if len(p) != 1 || p[0] != xpv2.ManagementActionObserve || len(mg.GetOwnerReferences()) != 0 {
				t.Fatalf("%s: policies %v, owners %v; want Observe only and no owner", mg.GetName(), p, mg.GetOwnerReferences())
			}
			if mg.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
				notReady++
			}
		}
		if len(vms.Items) == 21 && len(cts.Items) == 20 && notReady == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d VirtualMachines and %d Containers imported (want 21 and 20), %d not Ready", len(vms.Items), len(cts.Items), notReady)
		}
		time.Sleep(time.Second)
	}
}

// takeOver switches an imported resource to the given management policies
// and checks that Proxmox VE then sees exactly one write, the marker, as a
// config PUT of endpoint.
func takeOver(t *testing.T, hs *harness, mg client.Object, policies string, vmid int, name, endpoint string) {
	t.Helper()
	hs.Sim.ResetCounters()
	patch := []byte(`{"spec":{"managementPolicies":` + policies + `}}`)
	if err := hs.Kube.Patch(context.Background(), mg, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for {
		g, _ := hs.Sim.Guest(vmid)
		if m, ok := guest.ParseMarker(g.Config["description"]); ok && m.Name == name {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the marker of %s was never written: %q", name, g.Config["description"])
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // any further write would follow at once
	if w := writes(hs.Sim.Counters()); len(w) != 1 || w[endpoint] != 1 {
		t.Errorf("writes to Proxmox VE while taking %s under management: %v; want exactly one config PUT (the marker)", name, w)
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
