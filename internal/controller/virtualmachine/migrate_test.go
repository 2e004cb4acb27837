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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// moveTo asks for another node as a spec change would.
func moveTo(cr *v1alpha1.VirtualMachine, node string) {
	cr.Spec.NodeName = node
	cr.Generation++
}

// tasksOfType counts the tasks of a type on the VM, on any of the nodes.
func (f *fixture) tasksOfType(t *testing.T, vmid int, typ string, nodes ...string) int {
	t.Helper()
	n := 0
	for _, node := range nodes {
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

func TestNodeNameChangeMigrates(t *testing.T) {
	cases := map[string]struct {
		reason     string
		policy     v1alpha1.MigrationPolicy
		ha         bool
		wantOnline bool
		wantTasks  map[string]int
	}{
		"Live": {reason: "A running VM moves online, its local disk along, and keeps running.",
			wantOnline: true, wantTasks: map[string]int{"qmigrate": 1, "qmshutdown": 0}},
		"Offline": {reason: "The Offline policy shuts the VM down, migrates it offline and starts it on the target.",
			policy: v1alpha1.MigrationPolicyOffline, wantTasks: map[string]int{"qmigrate": 1, "qmshutdown": 1}},
		"HA": {reason: "An HA resource is handed to PVE's HA manager, and followed until it runs on the target.",
			ha: true, wantOnline: true, wantTasks: map[string]int{"hamigrate": 1, "qmigrate": 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmigrate": 300 * time.Millisecond, "hamigrate": 200 * time.Millisecond}})
			cr := cloneVM("mv")
			cr.Spec.MigrationPolicy = tc.policy
			f.store(t, cr, true)
			f.converge(t, cr, 30)
			vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
			if tc.ha {
				if err := f.sim.ManageHA(vmid, true); err != nil {
					t.Fatal(err)
				}
			}
			moveTo(cr, "othernode")
			f.converge(t, cr, 200)

			g, _ := f.sim.Guest(vmid)
			if g.Node != "othernode" || g.Status != "running" {
				t.Fatalf("%s\nVM %d on %s, %s; want running on othernode", tc.reason, vmid, g.Node, g.Status)
			}
			if n := len(f.sim.Guests()); n != 2 {
				t.Errorf("%d guests, want the template and this VM (nothing recreated)", n)
			}
			lm := cr.Status.LastMigration
			if lm == nil || lm.Result != v1alpha1.MigrationSucceeded || lm.From != testNode || lm.To != "othernode" || lm.Online != tc.wantOnline {
				t.Errorf("%s\nlastMigration %+v", tc.reason, lm)
			}
			if c := cr.GetCondition(v1alpha1.TypeMigrated); c.Status != corev1.ConditionTrue {
				t.Errorf("Migrated condition %+v, want True", c)
			}
			if cr.Status.RequestedNode != "othernode" || cr.Status.Status.Node != "othernode" {
				t.Errorf("requestedNode %q, status node %q", cr.Status.RequestedNode, cr.Status.Status.Node)
			}
			for typ, want := range tc.wantTasks {
				if got := f.tasksOfType(t, vmid, typ, testNode, "othernode"); got != want {
					t.Errorf("%s\n%d %s tasks, want %d", tc.reason, got, typ, want)
				}
			}
			if !f.log.Has(string(guest.ReasonMigrating)) || !f.log.Has(string(guest.ReasonMigrated)) {
				t.Error("want Migrating and Migrated events")
			}
		})
	}
}

// migratePosts counts the migrate requests that reached PVE.
func (f *fixture) migratePosts() int {
	return f.sim.Counters().ByEndpoint["POST /nodes/{node}/qemu/{vmid}/migrate"]
}

// A migration PVE's preconditions refuse (GET .../migrate, what PVE's own
// migrate dialog asks) is explained on the Migrated condition, naming what
// blocks it and the target, before any migrate request or task; the VM
// stays, and nothing is retried until the spec changes.
func TestMigrationRefusedByPreconditions(t *testing.T) {
	cases := map[string]struct {
		reason  string
		key     string
		value   string
		wantMsg string
	}{
		"PassedThroughPCI": {reason: "A local PCI device ties the VM to its node (check_local_resources).",
			key: "hostpci0", value: "0000:01:00.0",
			wantMsg: "the VM uses local resources hostpci0 (Proxmox VE moves them only with force, which only root@pam may use and the provider does not send)"},
		"LocalCDROM": {reason: "A local ISO in a CD-ROM drive blocks, as PVE's migrate dialog says (local_disks with cdrom).",
			key: "ide2", value: "local:iso/debian.iso,media=cdrom", wantMsg: "the VM has a local CD/DVD: local:iso/debian.iso"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			if err := f.sim.AddVolume(testNode, "local:iso/debian.iso"); err != nil {
				t.Fatal(err)
			}
			cr := cloneVM("pinned")
			f.store(t, cr, true)
			f.converge(t, cr, 30)
			vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
			if err := f.sim.SetGuestConfig(vmid, tc.key, tc.value); err != nil {
				t.Fatal(err)
			}
			moveTo(cr, "othernode")
			f.converge(t, cr, 60)
			for range 5 {
				f.converge(t, cr, 5)
			}
			g, _ := f.sim.Guest(vmid)
			if g.Node != testNode || g.Status != "running" {
				t.Errorf("%s\nVM on %s, %s; want still running on %s", tc.reason, g.Node, g.Status, testNode)
			}
			c := cr.GetCondition(v1alpha1.TypeMigrated)
			wantPrefix := "migration from " + testNode + " to othernode failed, the VM stays on " + testNode + ": Proxmox VE refuses it before any task runs: "
			if c.Status != corev1.ConditionFalse || c.Reason != v1alpha1.ReasonMigrationFailed || c.Message != wantPrefix+tc.wantMsg {
				t.Errorf("%s\nMigrated condition %+v\nwant False with message %q", tc.reason, c, wantPrefix+tc.wantMsg)
			}
			if n := f.migratePosts(); n != 0 {
				t.Errorf("%s\n%d migrate requests reached PVE, want none", tc.reason, n)
			}
			if n := f.tasksOfType(t, vmid, "qmigrate", testNode); n != 0 {
				t.Errorf("%s\n%d qmigrate tasks, want none", tc.reason, n)
			}
			if !f.log.Has(string(guest.ReasonMigrationFailed)) {
				t.Error("no MigrationFailed event")
			}
		})
	}
}

// A migration PVE's preconditions allow but its worker aborts (a physical
// disk passed through by path: scan_local_volumes refuses "local
// file/device", which the preconditions list as a plain local disk) leaves
// the VM where it was, and the Migrated condition carries the cause from the
// task log, not only the exit status "migration aborted"; no retry until the
// spec changes.
func TestMigrationTaskFailureCarriesTheCause(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("physical")
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	if err := f.sim.SetGuestConfig(vmid, "scsi1", "/dev/disk/by-id/ata-disk1"); err != nil {
		t.Fatal(err)
	}
	moveTo(cr, "othernode")
	f.converge(t, cr, 60)
	for range 5 {
		f.converge(t, cr, 5)
	}
	if g, _ := f.sim.Guest(vmid); g.Node != testNode || g.Status != "running" {
		t.Errorf("VM on %s, %s; want still running on %s", g.Node, g.Status, testNode)
	}
	c := cr.GetCondition(v1alpha1.TypeMigrated)
	want := "migration aborted (task log: Problem found while scanning volumes - can't migrate VM - check log: " +
		"can't migrate local disk '/dev/disk/by-id/ata-disk1': local file/device)"
	if c.Status != corev1.ConditionFalse || c.Reason != v1alpha1.ReasonMigrationFailed || !strings.HasSuffix(c.Message, want) {
		t.Errorf("Migrated condition %+v\nwant False ending with %q", c, want)
	}
	if n := f.tasksOfType(t, vmid, "qmigrate", testNode); n != 1 {
		t.Errorf("%d qmigrate tasks, want 1 (no retry until the spec changes)", n)
	}
	if !f.log.Has(string(guest.ReasonMigrationFailed)) {
		t.Error("no MigrationFailed event")
	}
}

// Never keeps the VM where it is; a move made outside the provider is
// followed and never undone.
func TestMigrationNeverAndMovesOutside(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("stay")
	cr.Spec.MigrationPolicy = v1alpha1.MigrationPolicyNever
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	moveTo(cr, "othernode")
	f.converge(t, cr, 30)
	if g, _ := f.sim.Guest(vmid); g.Node != testNode {
		t.Errorf("migrationPolicy Never: VM moved to %s", g.Node)
	}
	if !f.log.Has(string(guest.ReasonMigrationSkipped)) {
		t.Error("no MigrationSkipped event")
	}

	cr2 := cloneVM("ha-moved")
	f.store(t, cr2, true)
	f.converge(t, cr2, 30)
	vmid2, _ := guest.VMIDOf(meta.GetExternalName(cr2))
	if err := f.sim.MigrateGuest(vmid2, "othernode"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the steady-state resources view is 1s old at most
	f.converge(t, cr2, 30)
	if g, _ := f.sim.Guest(vmid2); g.Node != "othernode" || f.tasksOfType(t, vmid2, "qmigrate", testNode, "othernode") != 0 {
		t.Errorf("a VM moved outside the provider was moved back: on %s", g.Node)
	}
}
