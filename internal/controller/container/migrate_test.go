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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// moveTo asks for another node as a spec change would.
func moveTo(cr *v1alpha1.Container, node string) {
	cr.Spec.NodeName = node
	cr.Generation++
}

// tasksOfType counts the tasks of a type on the container, on both nodes.
func (f *fixture) tasksOfType(t *testing.T, vmid int, typ string) int {
	t.Helper()
	n := 0
	for _, node := range []string{testNode, otherNode} {
		tasks, err := f.cl.GuestTasks(context.Background(), node, vmid, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			if task.Type == typ {
				n++
			}
		}
	}
	return n
}

// convergeMoving is converge for a container that moves. An Observe that
// reads the container on its old node just as PVE moved it reports it
// moving between nodes, never an error.
func (f *fixture) convergeMoving(t *testing.T, cr *v1alpha1.Container, maxSteps int) {
	t.Helper()
	for range maxSteps {
		obs, err := f.external().Observe(context.Background(), cr)
		switch {
		case err != nil:
			t.Fatalf("Observe: %v", err)
		case obs.ResourceUpToDate && guest.IsReady(cr) && cr.Status.LastMigration != nil && cr.Status.LastMigration.Result != v1alpha1.MigrationRunning:
			return
		}
		if f.step(t, cr) && cr.Status.LastMigration != nil && cr.Status.LastMigration.Result != v1alpha1.MigrationRunning {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("not converged after %d steps: conditions %+v, lastMigration %+v", maxSteps, cr.Status.Conditions, cr.Status.LastMigration)
}

var migrationDurations = map[string]time.Duration{"vzmigrate": 300 * time.Millisecond, "hamigrate": 200 * time.Millisecond}

// A change of nodeName moves the container with the same VMID, nothing
// recreated: Live (the default) is PVE's restart migration for a running
// container, Offline shuts it down first, an HA resource goes through
// PVE's HA manager; all end running on the target.
func TestNodeNameChangeMigrates(t *testing.T) {
	cases := map[string]struct {
		reason     string
		policy     v1alpha1.MigrationPolicy
		stopped    bool
		ha         bool
		wantOnline bool
		wantPower  string
		wantTasks  map[string]int
	}{
		"LiveIsRestart": {reason: "A running container moves with a restart migration (restart=1), PVE starting it on the target.",
			wantOnline: true, wantPower: "running", wantTasks: map[string]int{"vzmigrate": 1, "vzshutdown": 0, "vzstart": 1}},
		"Offline": {reason: "The Offline policy shuts the container down, migrates it offline and starts it on the target.",
			policy: v1alpha1.MigrationPolicyOffline, wantPower: "running", wantTasks: map[string]int{"vzmigrate": 1, "vzshutdown": 1, "vzstart": 2}},
		"Stopped": {reason: "A container kept stopped moves offline and stays stopped.",
			stopped: true, wantPower: "stopped", wantTasks: map[string]int{"vzmigrate": 1, "vzstart": 1}},
		"HA": {reason: "An HA resource is handed to PVE's HA manager, and followed until it runs on the target.",
			ha: true, wantOnline: true, wantPower: "running", wantTasks: map[string]int{"hamigrate": 1, "vzmigrate": 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{TaskDurations: migrationDurations})
			cr := newContainer("mv", fromOSTemplate)
			cr.Spec.MigrationPolicy = tc.policy
			f.store(t, cr, true)
			f.converge(t, cr, 30)
			vmid := guesttest.VMIDOf(t, cr)
			if tc.stopped {
				cr.Spec.PowerState = v1alpha1.PowerStateStopped
				for i := 0; f.ct(t, vmid).Status != "stopped"; i++ {
					if i == 100 {
						t.Fatal("the container was not shut down")
					}
					f.step(t, cr)
					time.Sleep(20 * time.Millisecond)
				}
				f.converge(t, cr, 30)
			}
			if tc.ha {
				if err := f.sim.ManageHA(vmid, true); err != nil {
					t.Fatal(err)
				}
			}
			moveTo(cr, otherNode)
			f.convergeMoving(t, cr, 200)

			g := f.ct(t, vmid)
			if g.Node != otherNode || g.Status != tc.wantPower {
				t.Fatalf("%s\ncontainer %d on %s, %s; want %s on %s", tc.reason, vmid, g.Node, g.Status, tc.wantPower, otherNode)
			}
			if n := len(f.sim.Guests()); n != 2 {
				t.Errorf("%d guests, want the template and this container (nothing recreated)", n)
			}
			lm := cr.Status.LastMigration
			if lm == nil || lm.Result != v1alpha1.MigrationSucceeded || lm.From != testNode || lm.To != otherNode || lm.Online != tc.wantOnline {
				t.Errorf("%s\nlastMigration %+v", tc.reason, lm)
			}
			if c := cr.GetCondition(v1alpha1.TypeMigrated); c.Status != corev1.ConditionTrue {
				t.Errorf("Migrated condition %+v, want True", c)
			}
			if cr.Status.RequestedNode != otherNode || cr.Status.Status.Node != otherNode {
				t.Errorf("requestedNode %q, status node %q", cr.Status.RequestedNode, cr.Status.Status.Node)
			}
			for typ, want := range tc.wantTasks {
				if got := f.tasksOfType(t, vmid, typ); got != want {
					t.Errorf("%s\n%d %s tasks, want %d", tc.reason, got, typ, want)
				}
			}
			if !f.log.Has(string(guest.ReasonMigrating)) || !f.log.Has(string(guest.ReasonMigrated)) {
				t.Error("want Migrating and Migrated events")
			}
		})
	}
}

// A migration PVE aborts leaves the container where it was, running, says
// why on the Migrated condition (the cause from the task log, not only
// "migration aborted"), and is not retried until the spec changes.
func TestMigrationRefusedKeepsTheContainer(t *testing.T) {
	f := newFixture(t, pvesim.Options{TaskDurations: migrationDurations})
	cr := newContainer("pinned", fromOSTemplate)
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	vmid := guesttest.VMIDOf(t, cr)
	if err := f.sim.SetGuestConfig(vmid, "mp0", "/srv/data,mp=/data"); err != nil {
		t.Fatal(err)
	}
	moveTo(cr, otherNode)
	for range 40 {
		f.step(t, cr)
		if lm := cr.Status.LastMigration; lm != nil && lm.Result == v1alpha1.MigrationFailed {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for range 5 {
		f.step(t, cr)
	}
	if g := f.ct(t, vmid); g.Node != testNode || g.Status != "running" {
		t.Errorf("container on %s, %s; want still running on %s", g.Node, g.Status, testNode)
	}
	// pve-container's Migrate.pm prepare dies; AbstractMigrate logs the reason once, on
	// its abort line, and ends the task "migration aborted".
	c := cr.GetCondition(v1alpha1.TypeMigrated)
	want := "migration aborted (task log: cannot migrate local bind mount point 'mp0')"
	if c.Status != corev1.ConditionFalse || c.Reason != v1alpha1.ReasonMigrationFailed || !strings.HasSuffix(c.Message, want) {
		t.Errorf("Migrated condition %+v\nwant False ending with %q", c, want)
	}
	if n := f.tasksOfType(t, vmid, "vzmigrate"); n != 1 {
		t.Errorf("%d vzmigrate tasks, want 1 (no retry until the spec changes)", n)
	}
	if !f.log.Has(string(guest.ReasonMigrationFailed)) {
		t.Error("no MigrationFailed event")
	}
}

// A target PVE's preconditions do not allow (pve-container's
// migrate_vm_precondition lists every other node in allowed-nodes unless an
// HA rule blocks it, so a name outside the cluster is in neither list) is
// explained on the Migrated condition before any migrate request.
func TestMigrationRefusedByPreconditions(t *testing.T) {
	f := newFixture(t, pvesim.Options{TaskDurations: migrationDurations})
	cr := newContainer("lost", fromOSTemplate)
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	vmid := guesttest.VMIDOf(t, cr)
	moveTo(cr, "nowhere")
	for range 10 {
		f.step(t, cr)
	}
	if g := f.ct(t, vmid); g.Node != testNode || g.Status != "running" {
		t.Errorf("container on %s, %s; want still running on %s", g.Node, g.Status, testNode)
	}
	c := cr.GetCondition(v1alpha1.TypeMigrated)
	want := "migration from " + testNode + " to nowhere failed, the container stays on " + testNode +
		": Proxmox VE refuses it before any task runs: node nowhere is not another node of the cluster (allowed: " + otherNode + ")"
	if c.Status != corev1.ConditionFalse || c.Reason != v1alpha1.ReasonMigrationFailed || c.Message != want {
		t.Errorf("Migrated condition %+v\nwant False with message %q", c, want)
	}
	if n := f.sim.Counters().ByEndpoint["POST /nodes/{node}/lxc/{vmid}/migrate"]; n != 0 {
		t.Errorf("%d migrate requests reached PVE, want none", n)
	}
	if !f.log.Has(string(guest.ReasonMigrationFailed)) {
		t.Error("no MigrationFailed event")
	}
}

// Never keeps the container where it is.
func TestMigrationNeverKeepsTheContainer(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := newContainer("stay", fromOSTemplate)
	cr.Spec.MigrationPolicy = v1alpha1.MigrationPolicyNever
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	moveTo(cr, otherNode)
	f.converge(t, cr, 30)
	if g := f.ct(t, guesttest.VMIDOf(t, cr)); g.Node != testNode {
		t.Errorf("migrationPolicy Never: container moved to %s", g.Node)
	}
	if !f.log.Has(string(guest.ReasonMigrationSkipped)) {
		t.Error("no MigrationSkipped event")
	}
}
