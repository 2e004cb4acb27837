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

package kubemox

import (
	"context"
	"crypto/rand"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

// startStack brings up core Crossplane and builds the CLI and the package.
func (r *run) startStack() {
	t := r.t
	xp, err := testenv.StartCrossplane()
	if err != nil {
		t.Fatal(err)
	}
	r.xp = xp
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- provider log tail:\n%s", tail(xp.LogPath("provider"), 4000))
		}
		if err := xp.Stop(); err != nil {
			t.Errorf("stop Crossplane: %v", err)
		}
	})
	if r.kube, err = providertest.NewClient(xp.Config); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	r.kubeconfig = filepath.Join(tmp, "admin.kubeconfig")
	if err := providertest.WriteKubeconfig(xp.Config, r.kubeconfig); err != nil {
		t.Fatal(err)
	}
	r.bin = filepath.Join(tmp, "kubemox-migrate")
	buildCLI(t, r.bin)
}

// buildCLI builds cmd/kubemox-migrate: the tests run the binary, as users do.
func buildCLI(t *testing.T, path string) {
	t.Helper()
	build := exec.Command("go", "build", "-o", path, "github.com/kubemox/provider-proxmox/cmd/kubemox-migrate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build kubemox-migrate: %v\n%s", err, out)
	}
}

// seedSimulator makes the guests, file, certificate and snapshots kubemox
// made.
func (r *run) seedSimulator() {
	t := r.t
	sim, err := pvesim.Start(pvesim.Options{Nodes: []string{"pve1", "pve2"}, LogRequests: true})
	if err != nil {
		t.Fatal(err)
	}
	r.sim = sim
	t.Cleanup(sim.Close)
	sim.AddUser(rootUser, r.password)
	if err := sim.AddTemplate("pve1", 9000, "debian-12"); err != nil {
		t.Fatal(err)
	}
	if err := sim.AddTemplate("pve1", 9001, "ubuntu-24-04"); err != nil {
		t.Fatal(err)
	}
	vm := func(name string, cores, mem int, extra ...string) map[string]string {
		c := map[string]string{"name": name, "cores": fmt.Sprint(cores), "sockets": "1", "memory": fmt.Sprint(mem),
			"net0": "virtio,bridge=vmbr0", "scsi0": "local-lvm:8", "ostype": "l26"}
		for i := 0; i+1 < len(extra); i += 2 {
			c[extra[i]] = extra[i+1]
		}
		return c
	}
	r.guests = []guestSeed{
		{vmid: 101, node: "pve1", cfg: vm("web", 2, 2048), matches: true, obj: "web"},
		{vmid: 102, node: "pve1", cfg: vm("db", 2, 4096, "ciuser", "debian", "ide2", "local-lvm:cloudinit"), matches: true, obj: "db"},
		{vmid: 110, node: "pve2", cfg: vm("app-0", 1, 1024), matches: true, obj: "app-0"},
		{vmid: 111, node: "pve2", cfg: vm("app-1", 1, 1024), matches: true, obj: "app-1"},
		{vmid: 112, node: "pve2", cfg: vm("app-2", 1, 1024), matches: true, obj: "app-2"},
		{vmid: 130, node: "pve2", cfg: vm("legacy", 1, 512), matches: true, obj: "legacy"},
		{vmid: 131, node: "pve2", cfg: vm("legacy", 1, 512)},
		{vmid: 120, node: "pve1", kind: "lxc", cfg: map[string]string{"hostname": "ct1", "cores": "1", "memory": "512",
			"rootfs": "local-lvm:4", "ostype": "debian", "net0": "name=eth0,bridge=vmbr0,ip=dhcp"}, matches: true, obj: "ct1"},
	}
	for _, g := range r.guests {
		if err := sim.AddGuest(pvesim.GuestSeed{Kind: g.kind, Node: g.node, VMID: g.vmid, Config: g.cfg, Running: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sim.AddFile("pve1", "local:iso/debian-12.iso", 600<<20); err != nil {
		t.Fatal(err)
	}
	cl, err := pve.New(pve.Config{Endpoint: sim.URL(), Username: rootUser, Password: r.password, CAPEM: sim.CAPEM()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	crt, key := selfSigned(t, "pve1.example.com")
	if err := cl.UploadCertificate(ctx, "pve1", crt, key, false, false); err != nil {
		t.Fatal(err)
	}
	r.certPEM, r.keyPEM = crt, key
	for _, snap := range []string{"before-upgrade", "nightly", "auto_20261201"} {
		if _, err := cl.CreateSnapshot(ctx, pve.GuestRef{Type: pve.QEMU, Node: "pve1", VMID: 101}, snap, pve.SnapshotOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "snapshot "+snap, func() (bool, string) {
			g, _ := sim.Guest(101)
			return g.Lock == "" && strings.Contains(strings.Join(g.Snapshots, ","), snap), fmt.Sprint(g.Snapshots, g.Lock)
		})
	}
}

// installKubemox installs kubemox's CRDs, its (running) operator
// Deployment and objects of every kind with kubemox's finalizers.
func (r *run) installKubemox() {
	t, ctx := r.t, context.Background()
	r.installKubemoxCRDs()
	labels := map[string]string{"app.kubernetes.io/name": "kubemox"}
	operator := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: operatorName},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "ghcr.io/alperencelik/kubemox:v0.6.6"}}},
			},
		},
	}
	if err := createAll(ctx, r.kube,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}},
		operator); err != nil {
		t.Fatal(err)
	}
	conn := map[string]any{"name": "pve"}
	tpl := func(cores, mem int64) map[string]any {
		return map[string]any{"name": "debian-12", "cores": cores, "socket": int64(1), "memory": mem}
	}
	policy := kubemoxObject("VirtualMachineSnapshotPolicy", "default", "nightly", map[string]any{
		"snapshotSchedule": "0 2 * * *", "connectionRef": conn,
		"labelSelector": map[string]any{"matchLabels": map[string]any{"backup": "nightly"}},
		"retention":     map[string]any{"keepLast": int64(7)}})
	set := kubemoxObject("VirtualMachineSet", "", "app", map[string]any{
		"replicas": int64(3), "nodeName": "pve2", "template": tpl(1, 1024), "connectionRef": conn})
	if err := createAll(ctx, r.kube,
		kubemoxObject("ProxmoxConnection", "", "pve", map[string]any{
			"endpoint": r.sim.URL(), "username": rootUser, "password": r.password, "insecureSkipVerify": true}),
		kubemoxObject("ProxmoxConnection", "", "lab", map[string]any{
			"endpoint": r.sim.URL(), "username": rootUser, "password": "not-the-password", "insecureSkipVerify": true}),
		kubemoxObject("VirtualMachine", "", "web", map[string]any{
			"name": "web", "nodeName": "pve1", "template": tpl(2, 2048), "connectionRef": conn}),
		kubemoxObject("VirtualMachine", "", "db", map[string]any{
			"name": "db", "nodeName": "pve1", "template": tpl(2, 4096), "connectionRef": conn,
			"cloudInitConfig": map[string]any{"user": "debian", "password": "db-" + rand.Text()[:6]}}),
		kubemoxObject("VirtualMachine", "", "legacy", map[string]any{
			"name": "legacy", "nodeName": "pve2", "template": tpl(1, 512), "connectionRef": conn}),
		set,
		kubemoxObject("Container", "", "ct1", map[string]any{
			"name": "ct1", "nodeName": "pve1", "connectionRef": conn,
			"template": map[string]any{"name": "debian-ct", "cores": int64(1), "memory": int64(512)}}),
		kubemoxObject("VirtualMachineTemplate", "", "ubuntu", map[string]any{
			"name": "ubuntu-24-04", "node": "pve1", "connectionRef": conn,
			"imageConfig":          map[string]any{"content": "iso", "filename": "noble.img", "node": "pve1", "storage": "local", "url": "https://cloud-images.ubuntu.com/noble/current/noble.img"},
			"virtualMachineConfig": map[string]any{"sockets": int64(1), "cores": int64(2), "memory": int64(2048)}}),
		kubemoxObject("StorageDownloadURL", "", "debian-iso", map[string]any{
			"content": "iso", "filename": "debian-12.iso", "node": "pve1", "storage": "local", "connectionRef": conn,
			"url": "https://cdimage.debian.org/debian-cd/current/amd64/iso-cd/debian-12.iso"}),
		kubemoxObject("CustomCertificate", "", "pve1-cert", map[string]any{"connectionRef": conn,
			"proxmoxCertSpec": map[string]any{"certificate": r.certPEM, "privateKey": r.keyPEM, "nodeName": "pve1"}}),
		kubemoxObject("VirtualMachineSnapshot", "default", "web-before-upgrade", map[string]any{
			"virtualMachineName": "web", "snapshotName": "before-upgrade", "connectionRef": conn}),
		kubemoxObject("VirtualMachineSnapshot", "team-b", "web-nightly", map[string]any{
			"virtualMachineName": "web", "snapshotName": "nightly", "connectionRef": conn}),
		policy,
	); err != nil {
		t.Fatal(err)
	}
	// A snapshot the policy took, owned by it.
	auto := kubemoxObject("VirtualMachineSnapshot", "default", "nightly-20261201", map[string]any{
		"virtualMachineName": "web", "snapshotName": "auto_20261201", "connectionRef": conn})
	auto.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "proxmox.alperen.cloud/v1alpha1", Kind: "VirtualMachineSnapshotPolicy",
		Name: "nightly", UID: policy.GetUID(), Controller: ptr.To(true)}})
	if err := r.kube.Create(ctx, auto); err != nil {
		t.Fatal(err)
	}
	// kubemox's set made its VMs, owned by the set, named <set>-<i>.
	for i := range 3 {
		vm := kubemoxObject("VirtualMachine", "", fmt.Sprintf("app-%d", i), map[string]any{
			"name": fmt.Sprintf("app-%d", i), "nodeName": "pve2", "template": tpl(1, 1024), "connectionRef": conn})
		vm.SetLabels(map[string]string{"owner": "app"})
		vm.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "proxmox.alperen.cloud/v1alpha1", Kind: "VirtualMachineSet",
			Name: "app", UID: set.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
		if err := r.kube.Create(ctx, vm); err != nil {
			t.Fatal(err)
		}
	}
}

// installKubemoxCRDs installs kubemox's nine CRDs and waits until they
// are served.
func (r *run) installKubemoxCRDs() {
	t, ctx := r.t, context.Background()
	for _, k := range kubemoxKinds {
		if err := r.kube.Create(ctx, k.crd()); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range kubemoxKinds {
		name := k.plural + ".proxmox.alperen.cloud"
		eventually(t, setupWait, "CRD "+name+" Established", func() (bool, string) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := r.kube.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return false, err.Error()
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, ""
				}
			}
			return false, fmt.Sprint(crd.Status.Conditions)
		})
	}
}
