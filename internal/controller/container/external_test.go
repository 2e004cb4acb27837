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

package container

import (
	"context"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	testNode     = "lowtower"
	otherNode    = "othernode"
	testTemplate = "ct-debian-12"
	templateID   = 9100
	debianVolume = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
	nginxImage   = "docker.io/library/nginx:1.27"
)

type fixture struct {
	sim  *pvesim.Server
	cl   *pve.Client
	kube client.Client
	log  *guesttest.EventLog
	conn *connector
}

// newFixture starts a simulator with two nodes, a Debian template archive
// on testNode's local storage and a container template named testTemplate.
func newFixture(t *testing.T, opts pvesim.Options) *fixture {
	t.Helper()
	if opts.Nodes == nil {
		opts.Nodes = []string{testNode, otherNode}
	}
	sim, cl := guesttest.Simulator(t, opts, opts.Nodes...)
	if err := sim.AddVolume(testNode, debianVolume); err != nil {
		t.Fatalf("add template archive: %v", err)
	}
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: testNode, VMID: templateID, Template: true, Config: map[string]string{
		"hostname": testTemplate, "rootfs": "local-lvm:4", "memory": "512", "swap": "512", "cores": "1",
		"net0": "name=eth0,bridge=vmbr0,ip=dhcp,type=veth", "ostype": "debian", "arch": "amd64", "unprivileged": "1",
	}}); err != nil {
		t.Fatalf("add container template: %v", err)
	}
	kube := guesttest.FakeKube(t, &v1alpha1.Container{})
	log := &guesttest.EventLog{}
	return &fixture{sim: sim, cl: cl, kube: kube, log: log, conn: &connector{
		Deps: guesttest.Deps(kube, log), secrets: secrets.NewMemo(secrets.NewWatch(nil), kube), interfacesAsked: guest.NewStamps(),
	}}
}

// external returns a fresh per-reconcile client, as Connect would.
func (f *fixture) external() *external {
	return &external{connector: f.conn, cl: f.cl, connection: "default"}
}

// hardware is the hardware every test container asks for.
func hardware() v1alpha1.ContainerTemplate {
	return v1alpha1.ContainerTemplate{
		Cores: 2, Memory: 1024, Swap: ptr.To[int64](256),
		Disk:    []v1alpha1.ContainerDisk{{Storage: "local-lvm", Size: 8}},
		Network: []v1alpha1.ContainerNetwork{{Model: "virtio", Bridge: "vmbr0", IP: "dhcp"}},
	}
}

// newContainer is a Container named name creating from src (its source
// fields set on top of hardware()).
func newContainer(name string, src func(*v1alpha1.ContainerTemplate)) *v1alpha1.Container {
	tpl := hardware()
	src(&tpl)
	return &v1alpha1.Container{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: v1alpha1.ContainerSpec{
			Name: name, NodeName: testNode, Template: &tpl,
			ResourceSpec: v1alpha1.ResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}},
		},
	}
}

func fromOSTemplate(t *v1alpha1.ContainerTemplate) { t.OSTemplate = debianVolume }
func fromClone(t *v1alpha1.ContainerTemplate)      { t.Name = testTemplate }
func fromImage(t *v1alpha1.ContainerTemplate) {
	t.Image = &v1alpha1.ContainerImage{Reference: nginxImage, Storage: "local"}
}

// store creates cr in the fake API server, with the create-pending
// annotation the managed reconciler writes before calling Create.
func (f *fixture) store(t *testing.T, cr *v1alpha1.Container, pending bool) {
	t.Helper()
	guesttest.Store(t, f.kube, cr, pending)
}

// step drives one reconcile the way the managed reconciler does; it
// reports whether the resource is Ready and up to date.
func (f *fixture) step(t *testing.T, cr *v1alpha1.Container) bool {
	t.Helper()
	return guesttest.Step[*v1alpha1.Container](t, f.kube, f.external(), cr)
}

// converge steps until the resource is Ready and up to date.
func (f *fixture) converge(t *testing.T, cr *v1alpha1.Container, maxSteps int) {
	t.Helper()
	for range maxSteps {
		if f.step(t, cr) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	e := f.external()
	obs, err := e.Observe(context.Background(), cr)
	o, _ := e.obs.Last()
	t.Fatalf("not converged after %d steps: conditions %+v; err %v; diff %q; obs %+v", maxSteps, cr.Status.Conditions, err, obs.Diff, o)
}

// ct returns the simulator's container at vmid, failing without it.
func (f *fixture) ct(t *testing.T, vmid int) pvesim.GuestView {
	t.Helper()
	return guesttest.Guest(t, f.sim, vmid)
}

// Each source converges to a running container with the spec's hardware,
// our marker and the source recorded.
func TestCreateFromEachSourceConverges(t *testing.T) {
	cases := map[string]struct {
		reason string
		src    func(*v1alpha1.ContainerTemplate)
		want   map[string]string
		source *v1alpha1.ContainerSource
	}{
		"OSTemplate": {
			reason: "A template archive is created from with the spec's hardware.",
			src:    fromOSTemplate,
			want:   map[string]string{"cores": "2", "memory": "1024", "swap": "256", "unprivileged": "1", "ostype": "debian"},
			source: &v1alpha1.ContainerSource{OSTemplate: debianVolume},
		},
		"Clone": {
			reason: "A container template is cloned, then given the spec's hardware.",
			src:    fromClone,
			want:   map[string]string{"cores": "2", "memory": "1024", "swap": "256", "hostname": "web"},
		},
		"Image": {
			reason: "An OCI image is pulled into local storage, then created from.",
			src:    fromImage,
			want:   map[string]string{"cores": "2", "memory": "1024", "unprivileged": "1"},
			source: &v1alpha1.ContainerSource{ImageReference: nginxImage},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			cr := newContainer("web", tc.src)
			f.store(t, cr, false)
			f.converge(t, cr, 30)
			g := f.ct(t, guesttest.VMIDOf(t, cr))
			if g.Kind != "lxc" || g.Status != "running" {
				t.Errorf("%s\nguest kind %s status %s, want a running lxc", tc.reason, g.Kind, g.Status)
			}
			for k, v := range tc.want {
				if g.Config[k] != v {
					t.Errorf("%s\nconfig %s = %q, want %q", tc.reason, k, g.Config[k], v)
				}
			}
			if m, ok := guest.ParseMarker(g.Config["description"]); !ok || m != guest.MarkerOf(cr) {
				t.Errorf("%s\ndescription %q lacks our marker", tc.reason, g.Config["description"])
			}
			if (cr.Status.Source == nil) != (tc.source == nil) || (tc.source != nil && *cr.Status.Source != *tc.source) {
				t.Errorf("%s\nstatus.source = %+v, want %+v", tc.reason, cr.Status.Source, tc.source)
			}
			if cr.Status.Status.State != "running" || cr.Status.Status.IPAddress == "" || len(cr.Status.IPAddresses) == 0 {
				t.Errorf("%s\nstatus %+v, addresses %v: want running with an address", tc.reason, cr.Status.Status, cr.Status.IPAddresses)
			}
			if int(cr.Status.VMID) != guesttest.VMIDOf(t, cr) {
				t.Errorf("%s\nstatus.vmid = %d, want %d", tc.reason, cr.Status.VMID, guesttest.VMIDOf(t, cr))
			}
		})
	}
}

// storedExternalName is the external name the API server holds.
func (f *fixture) storedExternalName(t *testing.T, cr *v1alpha1.Container) string {
	t.Helper()
	return guesttest.StoredExternalName(t, f.kube, cr)
}

// The VMID is on the resource in the API server before PVE is asked to
// create anything, so a crash in between is resolvable.
func TestCreateStoresVMIDBeforeCreating(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := newContainer("stored", fromOSTemplate)
	f.store(t, cr, true)
	if _, err := f.external().Create(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	vmid := guesttest.VMIDOf(t, cr)
	if got := f.storedExternalName(t, cr); got != strconv.Itoa(vmid) {
		t.Errorf("stored external name = %q, want %d", got, vmid)
	}
	if !f.log.Has("Creating") {
		t.Errorf("no Creating event: %v", f.log.Reasons())
	}
}
