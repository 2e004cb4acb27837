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

// Package crashtest SIGKILLs the provider binary in the middle of a
// template build and checks a restarted provider finishes it with exactly
// one template VM. It has its own API server: the provider runs as a
// subprocess here.
package crashtest

import (
	"context"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	wait = 120 * time.Second
	node = "lowtower"
)

// pe is the API server and provider binary of this package.
var pe providertest.BinaryEnv

func TestMain(m *testing.M) { os.Exit(providertest.BinaryMain(m, &pe)) }

func template(f *providertest.SimFixture) *v1alpha1.VirtualMachineTemplate {
	cr := &v1alpha1.VirtualMachineTemplate{}
	cr.SetNamespace(f.Namespace)
	cr.SetName("tmpl")
	cr.Spec.ConnectionRef = &v1alpha1.ConnectionReference{Name: f.Connection}
	cr.Spec.Name = "debian-12-cloud"
	cr.Spec.NodeName = node
	cr.Spec.ImageConfig = v1alpha1.DownloadParameters{
		Content: "import", Filename: "debian-12.qcow2", Node: node, Storage: "local", URL: "https://cloud.example/debian-12.qcow2",
	}
	return cr
}

// assertOneTemplate checks the build ended with exactly one VM, a template
// carrying the resource's marker.
func assertOneTemplate(t *testing.T, f *providertest.SimFixture) {
	t.Helper()
	guests := f.Sim.Guests()
	if len(guests) != 1 {
		t.Fatalf("guests = %d, want 1", len(guests))
	}
	g := guests[0]
	if g.Config["template"] != "1" || !strings.Contains(g.Config["description"], "crossplane: "+f.Namespace+"/tmpl uid=") {
		t.Errorf("guest %d: template %q description %q, want our template", g.VMID, g.Config["template"], g.Config["description"])
	}
}

// The provider dies at each step of the build after Proxmox VE applied the
// step and before its answer arrived: the restarted provider finds the VM
// at the VMID recorded before the call, by its marker, and finishes the
// build without a second VM.
func TestKilledInTheMiddleOfTheBuild(t *testing.T) {
	cases := map[string]struct {
		reason       string
		method, path string
	}{
		"CreateAnswerLost": {
			reason: "Killed while PVE created the VM (disk imported): no second VM, the conversion still happens.",
			method: "POST", path: "/nodes/*/qemu",
		},
		"ConversionAnswerLost": {
			reason: "Killed while PVE converted the VM: the restarted provider sees the template and is done.",
			method: "POST", path: "/nodes/*/qemu/*/template",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := pe.NewSimFixture(t, "vmt-crash", pvesim.Options{Nodes: []string{node}})
			f.KillWhileAnswerHeld(t, &pe, tc.method, tc.path, template(f), wait)
			p2 := pe.StartProvider(t)
			f.WaitReady(t, p2, template(f), wait)
			assertOneTemplate(t, f)
		})
	}
}

// The control plane is lost in the middle of the build: the VM is created
// (with the resource's marker) and not converted yet, and the resource
// comes back as a new object (a new UID, no external name), as on a
// management cluster rebuilt from Git. It adopts the half-built VM and
// converts it: one guest, a template, Ready, and no second create.
func TestControlPlaneLostInTheMiddleOfTheBuild(t *testing.T) {
	f := pe.NewSimFixture(t, "vmt-lost", pvesim.Options{Nodes: []string{node}, LogRequests: true})
	f.KillWhileAnswerHeld(t, &pe, "POST", "/nodes/*/qemu", template(f), wait)
	halfBuilt := waitHalfBuilt(t, f)

	// The old objects go without the provider (their finalizers with them):
	// the new control plane never had them.
	old := template(f)
	forget(t, f, old)
	image := &v1alpha1.StorageDownloadURL{}
	image.SetNamespace(f.Namespace)
	image.SetName(old.Name + "-image")
	forget(t, f, image)

	f.Sim.ResetCounters()
	again := template(f)
	if err := f.Kube.Create(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	p := pe.StartProvider(t)
	f.WaitReady(t, p, again, wait)
	assertOneTemplate(t, f)
	if got := meta.GetExternalName(again); got != strconv.Itoa(halfBuilt) {
		t.Errorf("external name %q, want the half-built VM %d", got, halfBuilt)
	}
	if a := again.Status.Adoption; a == nil || int(a.VMID) != halfBuilt {
		t.Errorf("status.adoption %+v, want VMID %d", a, halfBuilt)
	}
	for _, r := range f.Sim.RequestLog() {
		if r.Method == http.MethodPost && createPath.MatchString(r.Path) {
			t.Errorf("the new object sent %s %s: a second build", r.Method, r.Path)
		}
	}
}

var createPath = regexp.MustCompile(`^/nodes/[^/]+/qemu$`)

// waitHalfBuilt waits until the create task ended (the VM named, unlocked)
// and returns the VM's VMID: it is marked and not a template.
func waitHalfBuilt(t *testing.T, f *providertest.SimFixture) int {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		if gs := f.Sim.Guests(); len(gs) == 1 && gs[0].Lock == "" && gs[0].Config["name"] != "" {
			if gs[0].Template || !strings.Contains(gs[0].Config["description"], "crossplane: "+f.Namespace+"/tmpl uid=") {
				t.Fatalf("guest %d after the create: template %v description %q, want our VM, not converted", gs[0].VMID, gs[0].Config["template"], gs[0].Config["description"])
			}
			return gs[0].VMID
		}
		if time.Now().After(deadline) {
			t.Fatalf("no created VM after %s: %+v", wait, f.Sim.Guests())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// forget deletes obj from the API server without the provider: its
// finalizers are dropped first.
func forget(t *testing.T, f *providertest.SimFixture, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	key := client.ObjectKeyFromObject(obj)
	if err := f.Kube.Get(ctx, key, obj); err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	obj.SetFinalizers(nil)
	if err := f.Kube.Update(ctx, obj); err != nil {
		t.Fatalf("drop the finalizers of %s: %v", key, err)
	}
	if err := client.IgnoreNotFound(f.Kube.Delete(ctx, obj)); err != nil {
		t.Fatalf("delete %s: %v", key, err)
	}
	deadline := time.Now().Add(wait)
	for !kerrors.IsNotFound(f.Kube.Get(ctx, key, obj)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still there", key)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
