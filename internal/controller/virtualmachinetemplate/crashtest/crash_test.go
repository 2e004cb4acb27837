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
	"os"
	"strings"
	"testing"
	"time"

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
