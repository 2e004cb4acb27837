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

package virtualmachine

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	testTemplate = "debian-12"
	templateID   = 9000
)

// fixture is one test's simulator (a template on testNode), its client, the
// fake API server and the connector the verbs run under.
type fixture struct {
	sim  *pvesim.Server
	cl   *pve.Client
	kube client.Client
	log  *guesttest.EventLog
	conn *connector
}

func newFixture(t *testing.T, opts pvesim.Options) *fixture {
	t.Helper()
	if opts.Nodes == nil {
		opts.Nodes = []string{testNode, "othernode"}
	}
	sim, cl := guesttest.Simulator(t, opts, opts.Nodes...)
	if err := sim.AddTemplate(testNode, templateID, testTemplate); err != nil {
		t.Fatalf("add template: %v", err)
	}
	kube := guesttest.FakeKube(t, &v1alpha1.VirtualMachine{})
	log := &guesttest.EventLog{}
	return &fixture{sim: sim, cl: cl, kube: kube, log: log, conn: &connector{
		Deps: guesttest.Deps(kube, log), secrets: secrets.NewMemo(secrets.NewWatch(nil), kube), agentAsked: guest.NewStamps(),
	}}
}

// external returns a fresh per-reconcile client, as Connect would.
func (f *fixture) external() *external {
	return &external{connector: f.conn, cl: f.cl, connection: "default"}
}

func cloneVM(name string) *v1alpha1.VirtualMachine {
	return &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: v1alpha1.VirtualMachineSpec{
			Name: name, NodeName: testNode, ResourceSpec: v1alpha1.ResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}},
			Template: &v1alpha1.VirtualMachineCloneSpec{Name: testTemplate, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{
				Cores: 4, Socket: 1, Memory: 4096,
				Disk:    []v1alpha1.VirtualMachineDisk{{Storage: "local-lvm", Size: 20, Device: "scsi0"}},
				Network: []v1alpha1.VirtualMachineNetwork{{Model: "virtio", Bridge: "vmbr0"}},
			}},
		},
	}
}

// store creates cr in the fake API server with the create-pending
// annotation the managed reconciler writes before calling Create.
func (f *fixture) store(t *testing.T, cr *v1alpha1.VirtualMachine, pending bool) {
	t.Helper()
	guesttest.Store(t, f.kube, cr, pending)
}

// converge drives the verbs the way the managed reconciler does until the
// resource is Ready and up to date, returning the number of steps.
func (f *fixture) converge(t *testing.T, cr *v1alpha1.VirtualMachine, maxSteps int) int {
	t.Helper()
	for step := 1; step <= maxSteps; step++ {
		if guesttest.Step[*v1alpha1.VirtualMachine](t, f.kube, f.external(), cr) {
			return step
		}
		time.Sleep(20 * time.Millisecond)
	}
	e := f.external()
	obs, _ := e.Observe(context.Background(), cr)
	o, err := e.obs.Last()
	if err != nil {
		t.Fatalf("not converged after %d steps; conditions %+v; %v", maxSteps, cr.Status.Conditions, err)
	}
	t.Fatalf("not converged after %d steps; conditions %+v; diff %q refused %v marker %v pass %v start %v reboot %v pending %v", maxSteps,
		cr.Status.Conditions, obs.Diff, o.plan.Refused, o.NeedMarker, o.needPass, o.Need.Start, o.Need.Reboot, o.PendingKeys)
	return 0
}
