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

package virtualmachinetemplate

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	testNode  = "lowtower"
	imageVol  = "local:import/debian-12.qcow2"
	imageURL  = "https://cloud.example/debian-12.qcow2"
	seedVMID  = 700
	imageSize = 2 << 30
)

// fixture is a simulator, a fake API server for the resource and its
// StorageDownloadURL (no controller runs: tests set the image's status),
// and the events recorded.
type fixture struct {
	sim  *pvesim.Server
	cl   *pve.Client
	kube client.Client
	log  *guesttest.EventLog
}

func newFixture(t *testing.T, opts pvesim.Options) *fixture {
	t.Helper()
	sim, cl := guesttest.Simulator(t, opts, testNode)
	kube := guesttest.FakeKube(t, &v1alpha1.VirtualMachineTemplate{}, &v1alpha1.StorageDownloadURL{})
	return &fixture{sim: sim, cl: cl, kube: kube, log: &guesttest.EventLog{}}
}

func (f *fixture) external() *external {
	return newExternal(f.kube, f.kube, f.cl, guest.Identity{Kube: f.kube, Client: f.cl, Connection: "default", VMIDs: pve.NewVMIDAllocator(0), Record: f.log, Type: pve.QEMU, Noun: "VM"}, f.log)
}

func newTemplate(name string) *v1alpha1.VirtualMachineTemplate {
	storage := "local-lvm"
	return &v1alpha1.VirtualMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: v1alpha1.VirtualMachineTemplateSpec{
			ResourceSpec: v1alpha1.ResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}},
			Name:         name, NodeName: testNode,
			VirtualMachineConfig: v1alpha1.VirtualMachineConfig{Sockets: 1, Cores: 2, Memory: 2048, Storage: &storage,
				Network: v1alpha1.VMTemplateNetwork{Model: "virtio", Bridge: "vmbr0"}},
			ImageConfig:     v1alpha1.DownloadParameters{Content: "import", Filename: "debian-12.qcow2", Node: testNode, Storage: "local", URL: imageURL},
			CloudInitConfig: &v1alpha1.CloudInitConfig{User: "debian", Password: "pw-canary"},
		},
	}
}

// image reads the StorageDownloadURL of that name in namespace default.
func (f *fixture) image(t *testing.T, name string) *v1alpha1.StorageDownloadURL {
	t.Helper()
	sdu := &v1alpha1.StorageDownloadURL{}
	if err := f.kube.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: name}, sdu); err != nil {
		t.Fatal(err)
	}
	return sdu
}

// talosTemplate is a template built as kubemox's Talos example builds one:
// a disk image shipped as .iso, downloaded as content iso.
func talosTemplate(name string) *v1alpha1.VirtualMachineTemplate {
	cr := newTemplate(name)
	cr.Spec.ImageConfig.Content, cr.Spec.ImageConfig.Filename = "iso", "talos-amd64.iso"
	cr.Spec.CloudInitConfig = &v1alpha1.CloudInitConfig{DNSServers: []string{"192.0.2.53"}}
	return cr
}

// stored creates cr in the fake API server as the reconciler has it before
// Create.
func (f *fixture) stored(t *testing.T, cr *v1alpha1.VirtualMachineTemplate) *v1alpha1.VirtualMachineTemplate {
	t.Helper()
	meta.SetExternalCreatePending(cr, time.Now())
	uid := cr.UID
	if err := f.kube.Create(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	cr.UID = uid
	return cr
}

// imageReady stores the template's StorageDownloadURL, Ready with the
// downloaded file, and puts the file in the simulator.
func (f *fixture) imageReady(t *testing.T, cr *v1alpha1.VirtualMachineTemplate) {
	t.Helper()
	if err := f.external().createImage(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	sdu := &v1alpha1.StorageDownloadURL{}
	if err := f.kube.Get(context.Background(), types.NamespacedName{Namespace: cr.Namespace, Name: imageName(cr)}, sdu); err != nil {
		t.Fatal(err)
	}
	sdu.Status.VolID = sdu.Spec.VolID()
	sdu.SetConditions(xpv2.Available())
	if err := f.kube.Status().Update(context.Background(), sdu); err != nil {
		t.Fatal(err)
	}
	if err := f.sim.AddFile(testNode, sdu.Spec.VolID(), imageSize); err != nil {
		t.Fatal(err)
	}
}

// ours seeds a VM at seedVMID carrying cr's marker (a template or not) and
// records the VMID on cr.
func (f *fixture) ours(t *testing.T, cr *v1alpha1.VirtualMachineTemplate, template, running bool) *v1alpha1.VirtualMachineTemplate {
	t.Helper()
	meta.SetExternalName(cr, strconv.Itoa(seedVMID))
	if err := f.sim.AddGuest(pvesim.GuestSeed{Node: testNode, VMID: seedVMID, Template: template, Running: running, Config: map[string]string{
		"name": cr.Spec.Name, "scsi0": "local-lvm:8", "description": guest.WithMarker("", guest.MarkerOf(cr)),
	}}); err != nil {
		t.Fatal(err)
	}
	return cr
}

// withoutImportContent configures the image's storage without import
// content, as before PVE 8.2.
func (f *fixture) withoutImportContent(t *testing.T) {
	t.Helper()
	if err := f.sim.SetStorageContent("local", "iso", "vztmpl", "backup"); err != nil {
		t.Fatal(err)
	}
}

type observation struct {
	Exists bool
	Step   string
	Ready  corev1.ConditionStatus
}
