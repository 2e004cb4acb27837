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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Create: each case stores a resource as the reconciler does before Create
// (create-pending set) on a seeded simulator, runs Create once and checks
// what PVE and the resource show.
func TestCreate(t *testing.T) {
	cases := map[string]struct {
		reason string
		sim    pvesim.Options
		setup  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine
		want   verbWant
	}{
		"Clone": {
			reason: "The VMID is stored on the resource before the clone request, and the clone carries our marker.",
			setup:  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine { return pending(t, f, cloneVM("web")) },
			want: verbWant{events: []string{"Cloning"}, noEvents: []string{"VMIDTaken"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				vmid, ok := guest.VMIDOf(meta.GetExternalName(cr))
				if !ok {
					t.Fatalf("external name %q is not a VMID", meta.GetExternalName(cr))
				}
				if got := f.storedExternalName(t, cr); got != strconv.Itoa(vmid) {
					t.Errorf("stored external name = %q, want %d", got, vmid)
				}
				g := f.guest(t, vmid)
				if m, ok := guest.ParseMarker(g.Config["description"]); !ok || m != guest.MarkerOf(cr) {
					t.Errorf("marker = %+v %v in %q", m, ok, g.Config["description"])
				}
				if g.Config["name"] != "web" || !strings.Contains(g.Config["scsi0"], "vm-"+strconv.Itoa(vmid)+"-disk") {
					t.Errorf("not a full clone named web: %v", g.Config)
				}
				if cr.GetAnnotations()[guest.AnnotationCreateTask] == "" {
					t.Error("the clone task is not recorded")
				}
			}},
		},
		"LinkedClone": {
			reason: "fullClone false makes a linked clone on the template's base disk.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("linked")
				linked := false
				cr.Spec.Template.FullClone = &linked
				return pending(t, f, cr)
			},
			want: verbWant{events: []string{"Cloning"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
				if g := f.guest(t, vmid); !strings.Contains(g.Config["scsi0"], "base-9000-disk") {
					t.Errorf("scsi0 = %q, want linked to the template's base disk", g.Config["scsi0"])
				}
			}},
		},
		"TemplateWithoutName": {
			reason: "A template spec without a name creates the VM from scratch, and says so in an event.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("noname")
				cr.Spec.Template.Name = ""
				return pending(t, f, cr)
			},
			want: verbWant{events: []string{"CreatingFromScratch", "Creating"}, noEvents: []string{"Cloning"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
				g := f.guest(t, vmid)
				if g.Config["cores"] != "4" || g.Config["memory"] != "4096" || !strings.Contains(g.Config["scsi0"], "size=20G") {
					t.Errorf("hardware not created: %v", g.Config)
				}
			}},
		},
		"ScratchWithCloudInit": {
			reason: "vmSpec creates the VM from scratch with its cloud-init keys set at creation.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("scratch")
				hw := cr.Spec.Template.VirtualMachineHardware
				cr.Spec.Template = nil
				cr.Spec.VMSpec = &v1alpha1.VirtualMachineScratchSpec{VirtualMachineHardware: hw,
					CloudInitConfig: &v1alpha1.CloudInitConfig{User: "ubuntu", IPConfig: &v1alpha1.IPConfig{IP: "dhcp"}}}
				return pending(t, f, cr)
			},
			want: verbWant{events: []string{"Creating"}, noEvents: []string{"CreatingFromScratch", "Cloning"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
				if g := f.guest(t, vmid); g.Config["ciuser"] != "ubuntu" || g.Config["ipconfig0"] != "ip=dhcp" {
					t.Errorf("cloud-init not set at creation: %v", g.Config)
				}
			}},
		},
		"StoredVMIDReused": {
			reason: "A VMID already stored and still free is used again; no other is picked.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("again")
				meta.SetExternalName(cr, "750")
				return pending(t, f, cr)
			},
			want: verbWant{events: []string{"Cloning"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if got := meta.GetExternalName(cr); got != "750" {
					t.Errorf("external name = %q, want the stored 750", got)
				}
				if m, ok := guest.ParseMarker(f.guest(t, 750).Config["description"]); !ok || m != guest.MarkerOf(cr) {
					t.Errorf("guest 750 is not ours: %+v", m)
				}
			}},
		},
		"StoredVMIDTaken": {
			reason: "A stored VMID taken by another guest meanwhile is left to Observe's marker rules; the other guest is untouched.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				seed(t, f, 500, map[string]string{"name": "squatter"})
				cr := cloneVM("race")
				meta.SetExternalName(cr, "500")
				return pending(t, f, cr)
			},
			// The guest may be our own earlier clone whose answer was lost:
			// only Observe, reading its marker, may give the VMID up (the
			// Observe table's lost-race cases).
			want: verbWant{events: []string{"VMIDInUse"}, noEvents: []string{"VMIDTaken", "Cloning"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if got := meta.GetExternalName(cr); got != "500" {
					t.Errorf("external name = %q, want 500 kept until Observe decides", got)
				}
				if g := f.guest(t, 500); g.Config["name"] != "squatter" || g.Config["description"] != "" {
					t.Errorf("the squatter was touched: %v", g.Config)
				}
				if n := len(f.sim.Guests()); n != 2 {
					t.Errorf("guests = %d, want template + squatter", n)
				}
			}},
		},
		"CloneFailedAlreadyExists": {
			reason: "A previous clone task that failed with 'already exists', with no guest there now, is retried at the same VMID.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := pending(t, f, cloneVM("lost"))
				failNextCloneTask(t, f, cr, "unable to create VM: config file already exists")
				return cr
			},
			want: verbWant{events: []string{"Cloning"}, noEvents: []string{"VMIDTaken"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
				if vmid != firstVMID(cr) {
					t.Errorf("VMID %d picked, want %d kept: a failed task alone never gives a VMID up", vmid, firstVMID(cr))
				}
				if _, ok := f.sim.Guest(vmid); !ok {
					t.Errorf("no guest at VMID %d", vmid)
				}
			}},
		},
		"CreateTaskRunning": {
			reason: "While the previous create task runs no second request is sent.",
			sim:    pvesim.Options{TaskDurations: map[string]time.Duration{"qmclone": time.Minute}},
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := pending(t, f, cloneVM("slow"))
				if _, err := f.external().Create(context.Background(), cr); err != nil {
					t.Fatalf("first Create: %v", err)
				}
				meta.AddAnnotations(cr, map[string]string{annFirstVMID: meta.GetExternalName(cr)})
				f.sim.ResetCounters()
				f.log = resetLog(f)
				return cr
			},
			want: verbWant{noEvents: []string{"Cloning", "VMIDTaken", "VMIDInUse"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if n := f.sim.Counters().ByEndpoint["POST /nodes/{node}/qemu/{vmid}/clone"]; n != 0 {
					t.Errorf("%d clone requests sent while the first clone task runs, want 0", n)
				}
				if got, _ := guest.VMIDOf(meta.GetExternalName(cr)); got != firstVMID(cr) || cr.GetAnnotations()[guest.AnnotationCreateTask] == "" {
					t.Errorf("external name %q, task %q: want VMID %d and the running task kept", meta.GetExternalName(cr), cr.GetAnnotations()[guest.AnnotationCreateTask], firstVMID(cr))
				}
			}},
		},
		"CloneTaskFailed": {
			reason: "A previous clone task that failed otherwise returns PVE's message and keeps the VMID.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := pending(t, f, cloneVM("broken"))
				failNextCloneTask(t, f, cr, "storage 'local-lvm' is full")
				return cr
			},
			want: verbWant{pveText: "storage 'local-lvm' is full", noEvents: []string{"VMIDTaken"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if got, _ := guest.VMIDOf(meta.GetExternalName(cr)); got != firstVMID(cr) {
					t.Errorf("external name = %q, want the VMID %d kept", meta.GetExternalName(cr), firstVMID(cr))
				}
				if cr.GetAnnotations()[guest.AnnotationCreateTask] != "" {
					t.Error("the failed task is still recorded: it would fail every retry")
				}
				onlyTemplate(t, f, cr)
			}},
		},
		"TemplateBusy": {
			reason: "A template busy with another clone is retried quietly, without an error.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				f.sim.SetFaults(faultOn("POST", "/nodes/*/qemu/*/clone", "can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout"))
				return pending(t, f, cloneVM("busy"))
			},
			want: verbWant{events: []string{"SourceBusy"}, noEvents: []string{"Cloning"}, pve: onlyTemplate},
		},
		"CloneRefused": {
			reason: "A clone PVE refuses returns PVE's message; nothing is created.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				f.sim.SetFaults(faultOn("POST", "/nodes/*/qemu/*/clone", "storage 'local-lvm' does not exist"))
				return pending(t, f, cloneVM("refused"))
			},
			want: verbWant{pveText: "storage 'local-lvm' does not exist", noEvents: []string{"Cloning"}, pve: onlyTemplate},
		},
		"TemplateMissing": {
			reason: "A template PVE does not have is an error before any VMID is picked.",
			setup: pendingAs(cloneVM, "orphan", func(cr *v1alpha1.VirtualMachine) {
				cr.Spec.Template.Name = "no-such-template"
			}),
			want: refusedBeforeVMID(guest.ErrTemplateNotFound),
		},
		"ISOMissing": {
			reason: "An ISO volume that does not exist is refused before any VMID is picked.",
			setup: pendingAs(scratchVM, "noiso", func(cr *v1alpha1.VirtualMachine) {
				cr.Spec.VMSpec.OSImage = &v1alpha1.OSImage{Name: "ide2", Value: "local:iso/missing.iso"}
			}),
			want: refusedBeforeVMID(pve.ErrMissingPrerequisite),
		},
		"ISOPresent": {
			reason: "An ISO volume that exists lets the VM be created.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				if err := f.sim.AddVolume(testNode, "local:iso/debian.iso"); err != nil {
					t.Fatal(err)
				}
				cr := scratchVM("withiso")
				cr.Spec.VMSpec.OSImage = &v1alpha1.OSImage{Name: "ide2", Value: "local:iso/debian.iso"}
				return pending(t, f, cr)
			},
			want: verbWant{events: []string{"Creating"}},
		},
		"DiskStorageMissing": {
			reason: "A disk on a storage the node does not have is refused before any VMID is picked.",
			setup: pendingAs(scratchVM, "nostorage", func(cr *v1alpha1.VirtualMachine) {
				cr.Spec.VMSpec.Disk[0].Storage = "ceph-pool"
			}),
			want: refusedBeforeVMID(pve.ErrMissingPrerequisite),
		},
		"DiskStorageWithoutImages": {
			reason: "A disk on a storage that holds no VM disks is refused before any VMID is picked.",
			setup: pendingAs(scratchVM, "isostorage", func(cr *v1alpha1.VirtualMachine) {
				cr.Spec.VMSpec.Disk[0].Storage = "local"
			}),
			want: refusedBeforeVMID(pve.ErrMissingPrerequisite),
		},
		"BridgeMissing": {
			reason: "A NIC on a bridge the node does not have is refused before the first start would fail.",
			setup: pendingAs(cloneVM, "nobridge", func(cr *v1alpha1.VirtualMachine) {
				cr.Spec.Template.Network[0].Bridge = "vmbr9"
			}),
			want: refusedBeforeVMID(pve.ErrMissingPrerequisite),
		},
		"NodeMissing": {
			reason: "A node not in the cluster is refused before any VMID is picked.",
			setup: pendingAs(cloneVM, "nonode", func(cr *v1alpha1.VirtualMachine) {
				cr.Spec.NodeName = "pve-nope"
			}),
			want: refusedBeforeVMID(pve.ErrMissingPrerequisite),
		},
		"PasswordSecretMissing": {
			reason: "A passwordFrom Secret that does not exist is an error before any VMID is picked.",
			setup: pendingAs(cloneVM, "nopass", func(cr *v1alpha1.VirtualMachine) {
				cr.Spec.Template.CloudInitConfig = &v1alpha1.CloudInitConfig{User: "u",
					PasswordFrom: &v1alpha1.OptionalSecretKeySelector{LocalSecretKeySelector: v1alpha1.LocalSecretKeySelector{Name: "missing", Key: "password"}}}
			}),
			want: refusedBeforeVMID(guest.ErrPasswordSecretUnreadable),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.sim)
			cr := tc.setup(t, f)
			_, err := f.external().Create(context.Background(), cr)
			tc.want.check(t, tc.reason, f, cr, err)
		})
	}
}

// pendingAs is the setup of a row that needs nothing but the spec: base(name)
// changed by mod, stored as pending.
func pendingAs(base func(string) *v1alpha1.VirtualMachine, name string, mod func(*v1alpha1.VirtualMachine)) func(*testing.T, *fixture) *v1alpha1.VirtualMachine {
	return func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
		t.Helper()
		cr := base(name)
		mod(cr)
		return pending(t, f, cr)
	}
}

// refusedBeforeVMID is what a Create refused with err before choosing a
// VMID must leave behind: nothing picked, nothing created.
func refusedBeforeVMID(err error) verbWant {
	return verbWant{err: err, pve: nothingPicked}
}

// nothingPicked checks that Create refused before choosing a VMID: no
// external name, and no guest but the template.
func nothingPicked(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
	t.Helper()
	if meta.GetExternalName(cr) != "" || f.storedExternalName(t, cr) != "" {
		t.Errorf("a VMID was picked: %q", meta.GetExternalName(cr))
	}
	onlyTemplate(t, f, cr)
}

// scratchVM is a VM created from scratch with one disk and one NIC.
func scratchVM(name string) *v1alpha1.VirtualMachine {
	cr := cloneVM(name)
	hw := cr.Spec.Template.VirtualMachineHardware
	cr.Spec.Template = nil
	cr.Spec.VMSpec = &v1alpha1.VirtualMachineScratchSpec{VirtualMachineHardware: hw}
	return cr
}

// pending stores cr with the create-pending annotation, as the reconciler
// does before calling Create.
func pending(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) *v1alpha1.VirtualMachine {
	t.Helper()
	f.store(t, cr, true)
	return cr
}

const annFirstVMID = "test/first-vmid"

// failNextCloneTask runs one Create whose clone task fails with msg (PVE
// discards the half-made guest), as a provider would have before, and
// remembers the VMID it used.
func failNextCloneTask(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine, msg string) {
	t.Helper()
	f.sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{Method: "POST", PathPattern: "/nodes/*/qemu/*/clone", TaskFailureRate: 1, TaskFailureMessage: msg}}})
	if _, err := f.external().Create(context.Background(), cr); err != nil {
		t.Fatalf("first Create: %v", err)
	}
	f.sim.SetFaults(pvesim.Faults{})
	if cr.GetAnnotations()[guest.AnnotationCreateTask] == "" {
		t.Fatal("first Create recorded no task")
	}
	meta.AddAnnotations(cr, map[string]string{annFirstVMID: meta.GetExternalName(cr)})
	f.log = resetLog(f)
}

func firstVMID(cr *v1alpha1.VirtualMachine) int {
	n, _ := strconv.Atoi(cr.GetAnnotations()[annFirstVMID])
	return n
}

// resetLog starts a fresh event log, so a case checks only its verb's events.
func resetLog(f *fixture) *guesttest.EventLog {
	l := &guesttest.EventLog{}
	f.conn.Record = l
	return l
}
