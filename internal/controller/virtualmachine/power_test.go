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
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// keepStopped asks for powerState Stopped as a spec change would.
func keepStopped(cr *v1alpha1.VirtualMachine, timeoutSeconds int32) {
	cr.Spec.PowerState = v1alpha1.PowerStateStopped
	if timeoutSeconds > 0 {
		cr.Spec.ShutdownTimeoutSeconds = &timeoutSeconds
	}
	cr.Generation++
}

// A running VM whose spec asks for Stopped is shut down gracefully; once
// stopped it still gets configuration changes, applied at once (nothing is
// left pending, nothing starts it), and a start in the PVE UI is undone.
func TestPowerStateStopped(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("halt")
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))

	keepStopped(cr, 0)
	f.converge(t, cr, 30)
	g, _ := f.sim.Guest(vmid)
	if g.Status != "stopped" {
		t.Fatalf("status = %s, want stopped", g.Status)
	}
	if !f.log.Has(string(guest.ReasonShuttingDown)) || f.log.Has(string(guest.ReasonStopping)) {
		t.Error("want a graceful shutdown (ShuttingDown) and no hard stop (Stopping)")
	}
	if lt := cr.Status.LastTask; lt == nil || lt.Type != "qmshutdown" {
		t.Errorf("last task %+v, want the qmshutdown", lt)
	}

	cr.Spec.Template.Cores = 2
	cr.Generation++
	f.converge(t, cr, 30)
	g, _ = f.sim.Guest(vmid)
	if g.Config["cores"] != "2" || len(g.Pending) != 0 || g.Status != "stopped" {
		t.Errorf("cores=%s pending=%v status=%s: want 2 applied at once on the stopped VM, which stays stopped", g.Config["cores"], g.Pending, g.Status)
	}

	if err := f.sim.SetGuestStatus(vmid, "running"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the steady-state resources view is 1s old at most
	f.converge(t, cr, 30)
	if g, _ = f.sim.Guest(vmid); g.Status != "stopped" {
		t.Errorf("a VM started outside the provider is %s, want stopped again", g.Status)
	}
}

// A guest that ignores the power button (acpi: 0, and no agent, which PVE
// would ask instead) is given the
// spec's timeout; then it is stopped hard, with a warning saying why.
func TestShutdownTimeoutThenStop(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("deaf")
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	for k, v := range map[string]string{"acpi": "0", "agent": "0"} {
		if err := f.sim.SetGuestConfig(vmid, k, v); err != nil {
			t.Fatal(err)
		}
	}

	keepStopped(cr, 1)
	start := time.Now()
	f.converge(t, cr, 200)
	g, _ := f.sim.Guest(vmid)
	if g.Status != "stopped" {
		t.Fatalf("status = %s, want stopped", g.Status)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("stopped after %v: the guest was not given its 1 s to shut down", took)
	}
	if !f.log.Has(string(guest.ReasonShuttingDown)) || !f.log.Has(string(guest.ReasonStopping)) {
		t.Error("want a graceful shutdown first (ShuttingDown), then a hard stop (Stopping)")
	}
	if lt := cr.Status.LastTask; lt == nil || lt.Type != "qmstop" || lt.ExitStatus != "OK" {
		t.Errorf("last task %+v, want a qmstop that succeeded", lt)
	}
}

// powerState Running starts a VM whatever enableAutoStart says.
func TestPowerStateRunningOverridesAutoStart(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("up")
	cr.Spec.EnableAutoStart = new(bool)
	cr.Spec.PowerState = v1alpha1.PowerStateRunning
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	if g, _ := f.sim.Guest(vmid); g.Status != "running" {
		t.Errorf("status = %s, want running", g.Status)
	}
	if err := f.sim.SetGuestStatus(vmid, "stopped"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	f.converge(t, cr, 30)
	if g, _ := f.sim.Guest(vmid); g.Status != "running" {
		t.Errorf("a VM stopped outside the provider is %s, want running again", g.Status)
	}
}
