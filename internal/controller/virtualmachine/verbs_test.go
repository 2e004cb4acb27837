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

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// ownedVMID is where the verb tables seed the resource's guest.
const ownedVMID = 700

// verbWant is what one verb must leave behind.
type verbWant struct {
	// err is our own error the verb returns, compared with errors.Is; nil
	// (with pveText "") means no error.
	err error
	// pveText is part of Proxmox VE's own message the error must carry.
	pveText string
	// secret must appear in no error and no event message.
	secret string
	// events must all be recorded; noEvents must not.
	events, noEvents []string
	// ready is the Ready condition's status ("" = not checked), readyMsg a
	// substring of its message.
	ready    corev1.ConditionStatus
	readyMsg string
	// pve checks the simulator (and the resource) afterwards.
	pve func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine)
}

func (w verbWant) check(t *testing.T, reason string, f *fixture, cr *v1alpha1.VirtualMachine, err error) {
	t.Helper()
	guesttest.Want{Reason: reason, Err: w.err, PVEText: w.pveText, Events: w.events, NoEvents: w.noEvents, Secret: w.secret,
		Ready: w.ready, ReadyMsg: w.readyMsg}.Check(t, f.log, cr, err)
	if w.pve != nil {
		w.pve(t, f, cr)
	}
}

// owned stores cloneVM(name) as a resource we created, Ready and in sync,
// and seeds its guest at ownedVMID matching the spec and carrying its
// marker; cfg overrides the guest's config ("" removes a key).
func owned(t *testing.T, f *fixture, name string, running bool, cfg map[string]string) *v1alpha1.VirtualMachine {
	t.Helper()
	cr := cloneVM(name)
	return ownedAs(t, f, cr, running, cfg)
}

func ownedAs(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine, running bool, cfg map[string]string) *v1alpha1.VirtualMachine {
	t.Helper()
	meta.SetExternalName(cr, strconv.Itoa(ownedVMID))
	meta.SetExternalCreateSucceeded(cr, time.Now())
	f.store(t, cr, true)
	cr.Status.VMID = ownedVMID
	cr.SetConditions(xpv2.Available().WithObservedGeneration(1), xpv2.ReconcileSuccess().WithObservedGeneration(1))
	base := map[string]string{
		"name": cr.Spec.Name, "cores": "4", "sockets": "1", "memory": "4096", "scsi0": "local-lvm:20",
		"net0": "virtio,bridge=vmbr0", "description": guest.MarkerOf(cr).String(),
	}
	for k, v := range cfg {
		if v == "" {
			delete(base, k)
			continue
		}
		base[k] = v
	}
	if err := f.sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: testNode, VMID: ownedVMID, Config: base, Running: running}); err != nil {
		t.Fatalf("seed %d: %v", ownedVMID, err)
	}
	return cr
}

// guest returns the simulator's guest at vmid, failing the test without it.
func (f *fixture) guest(t *testing.T, vmid int) pvesim.GuestView {
	t.Helper()
	return guesttest.Guest(t, f.sim, vmid)
}

// storedExternalName is the external name in the (fake) API server.
func (f *fixture) storedExternalName(t *testing.T, cr *v1alpha1.VirtualMachine) string {
	t.Helper()
	return guesttest.StoredExternalName(t, f.kube, cr)
}

func faultOn(method, pattern, message string) pvesim.Faults {
	return pvesim.Faults{Rules: []pvesim.FaultRule{{Method: method, PathPattern: pattern, ErrorRate: 1, Message: message}}}
}

// onlyTemplate checks nothing but the template exists.
func onlyTemplate(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
	t.Helper()
	if n := len(f.sim.Guests()); n != 1 {
		t.Errorf("guests = %d, want the template only", n)
	}
}

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

// Update: each case seeds a guest and a resource, runs Observe and, when it
// reports the guest not up to date, Update (as one reconcile does), then
// checks PVE, events, conditions and the error.
func TestUpdate(t *testing.T) {
	cases := map[string]struct {
		reason   string
		sim      pvesim.Options
		setup    func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine
		upToDate bool
		want     verbWant
	}{
		"InSync": {
			reason:   "A VM matching its spec is up to date and Ready, and nothing is sent to PVE.",
			setup:    func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine { return owned(t, f, "calm", true, nil) },
			upToDate: true,
			want: verbWant{ready: corev1.ConditionTrue, noEvents: []string{"Configured", "DriftCorrected", "Started"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if w := writes(f); len(w) > 0 {
					t.Errorf("PVE changed although in sync: %v", w)
				}
			}},
		},
		"CoresDrifted": {
			reason: "Cores changed behind our back on a running VM are corrected with a warning and left pending for a reboot.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				return owned(t, f, "drift", true, map[string]string{"cores": "1"})
			},
			want: verbWant{ready: corev1.ConditionTrue, events: []string{"DriftCorrected"}, noEvents: []string{"Configured"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if g := f.guest(t, ownedVMID); g.Config["cores"] != "4" && g.Pending["cores"] != "4" {
					t.Errorf("cores = %s (pending %q), want 4", g.Config["cores"], g.Pending["cores"])
				}
				if !contains(cr.Status.PendingChanges, "cores") {
					t.Errorf("status.pendingChanges = %v, want cores", cr.Status.PendingChanges)
				}
			}},
		},
		"BridgeDrifted": {
			reason: "A drifted bridge is corrected, keeping the MAC and the NIC options the user did not set.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("nic")
				off := false
				cr.Spec.EnableAutoStart = &off
				return ownedAs(t, f, cr, false, map[string]string{"net0": "virtio=BC:24:11:00:00:01,bridge=vmbr9,firewall=1"})
			},
			want: verbWant{events: []string{"DriftCorrected"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if got := f.guest(t, ownedVMID).Config["net0"]; got != "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1" {
					t.Errorf("net0 = %q", got)
				}
			}},
		},
		"SpecChanged": {
			reason: "A changed spec is configured with a Configured event, not reported as drift.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := owned(t, f, "grow", false, nil)
				cr.Spec.Template.Cores = 8
				cr.Generation = 2
				return cr
			},
			want: verbWant{events: []string{"Configured"}, noEvents: []string{"DriftCorrected", "Started"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if g := f.guest(t, ownedVMID); g.Config["cores"] != "8" {
					t.Errorf("cores = %s, want 8 (configuration before the start)", g.Config["cores"])
				}
			}},
		},
		"StoppedAutoStart": {
			reason: "A stopped VM with enableAutoStart is started.",
			setup:  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine { return owned(t, f, "off", false, nil) },
			want: verbWant{ready: corev1.ConditionFalse, events: []string{"Started"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if g := f.guest(t, ownedVMID); g.Status != "running" {
					t.Errorf("status = %s, want running", g.Status)
				}
				if lt := cr.Status.LastTask; lt == nil || lt.Type != "qmstart" {
					t.Errorf("last task = %+v, want qmstart", lt)
				}
			}},
		},
		"StoppedNoAutoStart": {
			reason: "A stopped VM with enableAutoStart false is left stopped.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("stay-off")
				off := false
				cr.Spec.EnableAutoStart = &off
				return ownedAs(t, f, cr, false, nil)
			},
			upToDate: true,
			want: verbWant{ready: corev1.ConditionTrue, noEvents: []string{"Started"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if g := f.guest(t, ownedVMID); g.Status != "stopped" {
					t.Errorf("status = %s, want stopped", g.Status)
				}
			}},
		},
		"PendingChangeRebooted": {
			reason: "A change PVE left pending on a running VM is applied by one reboot.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := owned(t, f, "pend", true, map[string]string{"cores": "2"})
				ref := pve.GuestRef{Type: pve.QEMU, Node: testNode, VMID: ownedVMID}
				if err := f.cl.SetGuestConfig(context.Background(), ref, map[string]string{"cores": "4"}, nil); err != nil {
					t.Fatal(err)
				}
				if g := f.guest(t, ownedVMID); g.Pending["cores"] != "4" {
					t.Fatalf("setup: cores not pending: %v", g.Pending)
				}
				return cr
			},
			want: verbWant{events: []string{"Rebooted"}, noEvents: []string{"DriftCorrected", "Configured"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if lt := cr.Status.LastTask; lt == nil || lt.Type != "qmreboot" {
					t.Errorf("last task = %+v, want qmreboot", lt)
				}
				eventually(t, "cores applied by the reboot", func() bool {
					g := f.guest(t, ownedVMID)
					return g.Config["cores"] == "4" && len(g.Pending) == 0
				})
			}},
		},
		"PendingChangeNeverReboot": {
			reason: "With rebootPolicy Never a pending change causes no reboot; its keys are listed in status.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("keep")
				cr.Spec.RebootPolicy = v1alpha1.RebootPolicyNever
				cr = ownedAs(t, f, cr, true, map[string]string{"cores": "2"})
				if err := f.cl.SetGuestConfig(context.Background(), pve.GuestRef{Type: pve.QEMU, Node: testNode, VMID: ownedVMID}, map[string]string{"cores": "4"}, nil); err != nil {
					t.Fatal(err)
				}
				return cr
			},
			upToDate: true,
			want: verbWant{noEvents: []string{"Rebooted"}, pve: func(t *testing.T, _ *fixture, cr *v1alpha1.VirtualMachine) {
				if !contains(cr.Status.PendingChanges, "cores") {
					t.Errorf("status.pendingChanges = %v, want cores", cr.Status.PendingChanges)
				}
			}},
		},
		"DiskGrown": {
			reason: "A disk smaller than the spec is grown by a resize task.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				return owned(t, f, "small", true, map[string]string{"scsi0": "local-lvm:10"})
			},
			want: verbWant{events: []string{"Resized"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if got := f.guest(t, ownedVMID).Config["scsi0"]; !strings.Contains(got, "size=20G") {
					t.Errorf("scsi0 = %q, want 20G", got)
				}
				if lt := cr.Status.LastTask; lt == nil || lt.Type != "resize" {
					t.Errorf("last task = %+v, want PVE's resize task", lt)
				}
			}},
		},
		"DiskShrinkRefused": {
			reason: "A disk larger than the spec is never shrunk: the change is refused and the disk kept.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				return owned(t, f, "big", true, map[string]string{"scsi0": "local-lvm:40"})
			},
			want: verbWant{err: guest.ErrChangeRefused, noEvents: []string{"Resized"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if got := f.guest(t, ownedVMID).Config["scsi0"]; !strings.Contains(got, "size=40G") {
					t.Errorf("scsi0 = %q, want 40G untouched", got)
				}
			}},
		},
		"DiskMoveRefused": {
			reason: "A disk on another storage than the spec's is never moved: the change is refused.",
			sim:    pvesim.Options{SharedStorage: "ceph"},
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				return owned(t, f, "elsewhere", true, map[string]string{"scsi0": "ceph:20"})
			},
			want: verbWant{err: guest.ErrChangeRefused, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if got := f.guest(t, ownedVMID).Config["scsi0"]; !strings.HasPrefix(got, "ceph:") {
					t.Errorf("scsi0 = %q, want still on ceph", got)
				}
			}},
		},
		"DiskAdded": {
			reason: "A disk added to the spec is allocated.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := owned(t, f, "more", true, nil)
				cr.Spec.Template.Disk = append(cr.Spec.Template.Disk, v1alpha1.VirtualMachineDisk{Storage: "local-lvm", Size: 5, Device: "scsi1"})
				cr.Generation = 2
				return cr
			},
			want: verbWant{events: []string{"DiskAdded"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				g := f.guest(t, ownedVMID)
				if d := g.Config["scsi1"] + g.Pending["scsi1"]; !strings.Contains(d, "size=5G") {
					t.Errorf("scsi1 = %q (pending %q), want 5G", g.Config["scsi1"], g.Pending["scsi1"])
				}
			}},
		},
		"NewDiskLocked": {
			reason: "A new disk PVE refuses before forking (locked since Observe) is retried quietly; no task is followed.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				f.sim.SetFaults(faultOn("POST", "/nodes/*/qemu/*/config", "VM is locked (clone)"))
				cr := owned(t, f, "morelater", true, nil)
				cr.Spec.Template.Disk = append(cr.Spec.Template.Disk, v1alpha1.VirtualMachineDisk{Storage: "local-lvm", Size: 5, Device: "scsi1"})
				cr.Generation = 2
				return cr
			},
			want: verbWant{noEvents: []string{"DiskAdded", "TaskFailed"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if _, ok := f.guest(t, ownedVMID).Config["scsi1"]; ok {
					t.Error("scsi1 allocated despite the refusal")
				}
				if guest.TaskUnderway(cr.Status.LastTask) {
					t.Errorf("a refused request recorded a task: %+v", cr.Status.LastTask)
				}
			}},
		},
		"MarkerOldUID": {
			reason: "Our marker with an old UID (a restored object) is rewritten, the user's notes kept.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				return owned(t, f, "restored", true, map[string]string{"description": "ops notes\ncrossplane: default/restored uid=0000"})
			},
			want: verbWant{events: []string{"Adopted"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if got := f.guest(t, ownedVMID).Config["description"]; got != "ops notes\n"+guest.MarkerOf(cr).String() {
					t.Errorf("description = %q", got)
				}
			}},
		},
		"LockedByBackup": {
			reason: "A guest locked by a backup is not changed while PVE works.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				return owned(t, f, "locked", true, map[string]string{"cores": "1", "lock": "backup"})
			},
			upToDate: true,
			want: verbWant{ready: corev1.ConditionFalse, noEvents: []string{"DriftCorrected"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if g := f.guest(t, ownedVMID); g.Config["cores"] != "1" || g.Pending["cores"] != "" {
					t.Errorf("a locked guest was changed: cores %s pending %v", g.Config["cores"], g.Pending)
				}
			}},
		},
		"ConfigWriteLocked": {
			reason: "A config write PVE answers with locked is retried quietly, without an event.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				f.sim.SetFaults(faultOn("PUT", "/nodes/*/qemu/*/config", "VM 700 is locked (snapshot)"))
				return owned(t, f, "later", true, map[string]string{"cores": "1"})
			},
			want: verbWant{noEvents: []string{"DriftCorrected", "Configured"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if g := f.guest(t, ownedVMID); g.Config["cores"] != "1" {
					t.Errorf("cores = %s, want unchanged", g.Config["cores"])
				}
			}},
		},
		"ConfigRefused": {
			reason: "A config PVE refuses returns PVE's message with the password scrubbed.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				f.sim.SetFaults(faultOn("PUT", "/nodes/*/qemu/*/config", "cipassword 'pw-canary-77': value rejected"))
				cr := cloneVM("pw")
				cr.Spec.Template.CloudInitConfig = &v1alpha1.CloudInitConfig{User: "u", Password: "pw-canary-77"}
				return ownedAs(t, f, cr, true, map[string]string{"ciuser": "u"})
			},
			want: verbWant{pveText: "value rejected", secret: "pw-canary-77", noEvents: []string{"PasswordApplied"}, pve: func(t *testing.T, _ *fixture, cr *v1alpha1.VirtualMachine) {
				if cr.Status.CloudInitPasswordApplied != nil {
					t.Errorf("password recorded as applied: %+v", cr.Status.CloudInitPasswordApplied)
				}
			}},
		},
		"InlinePasswordApplied": {
			reason: "An inline password never applied is applied; its generation is recorded, never the password.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("pwok")
				cr.Spec.Template.CloudInitConfig = &v1alpha1.CloudInitConfig{User: "u", Password: "pw-canary-88"}
				return ownedAs(t, f, cr, false, map[string]string{"ciuser": "u"})
			},
			want: verbWant{events: []string{"PasswordApplied"}, secret: "pw-canary-88", pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if f.guest(t, ownedVMID).Config["cipassword"] == "" {
					t.Error("cipassword not set")
				}
				if a := cr.Status.CloudInitPasswordApplied; a == nil || a.Generation != cr.Generation {
					t.Errorf("applied version = %+v, want generation %d", a, cr.Generation)
				}
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.sim)
			cr := tc.setup(t, f)
			f.sim.ResetCounters()
			e := f.external()
			obs, err := e.Observe(context.Background(), cr)
			got := observed{Exists: obs.ResourceExists, UpToDate: obs.ResourceUpToDate, Err: err}
			if diff := cmp.Diff(observed{Exists: true, UpToDate: tc.upToDate}, got, cmpopts.EquateErrors()); diff != "" {
				t.Fatalf("%s\nObserve(...): -want, +got:\n%s(PVE diff %q)", tc.reason, diff, obs.Diff)
			}
			if !obs.ResourceUpToDate {
				_, err = e.Update(context.Background(), cr)
			}
			tc.want.check(t, tc.reason, f, cr, err)
		})
	}
}

// observed is what the Update and Delete tables need of the Observe before
// the verb, as one reconcile runs it.
type observed struct {
	Exists, UpToDate bool
	Err              error
}

// writes lists the requests other than reads PVE received.
func writes(f *fixture) []string {
	var out []string
	for ep, n := range f.sim.Counters().ByEndpoint {
		if !strings.HasPrefix(ep, "GET ") {
			out = append(out, ep+"="+strconv.Itoa(n))
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// eventually polls cond for a while; PVE's own follow-up tasks (the start
// after a reboot) run after the verb returned.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Errorf("not %s after 20s", what)
	}
}

// Delete: each case seeds a guest and a resource being deleted, runs
// Observe and, when the guest exists, Delete (one reconcile), then checks
// PVE, events and the error.
func TestDelete(t *testing.T) {
	cases := map[string]struct {
		reason string
		setup  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine
		exists bool
		want   verbWant
	}{
		"RunningShutsDown": {
			reason: "A running VM is shut down gracefully first and not destroyed yet.",
			setup:  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine { return owned(t, f, "up", true, nil) },
			exists: true,
			want: verbWant{events: []string{"ShuttingDown"}, noEvents: []string{"Deleting"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				f.guest(t, ownedVMID)
				if lt := cr.Status.LastTask; lt == nil || lt.Type != "qmshutdown" {
					t.Errorf("last task = %+v, want qmshutdown", lt)
				}
			}},
		},
		"StillRunningStopped": {
			reason: "A VM still running after its shutdown task ended is stopped.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := owned(t, f, "stubborn", true, nil)
				cr.Status.LastTask = &v1alpha1.TaskStatus{UPID: "UPID:lowtower:0:0:0:qmshutdown:700:root@pam:", Type: "qmshutdown", Status: guest.TaskStopped}
				return cr
			},
			exists: true,
			want: verbWant{events: []string{"Stopping"}, noEvents: []string{"ShuttingDown", "Deleting"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if g := f.guest(t, ownedVMID); g.Status != "stopped" {
					t.Errorf("status = %s, want stopped", g.Status)
				}
			}},
		},
		"StoppedDestroyed": {
			reason: "A stopped VM is destroyed with purge; the template is kept.",
			setup:  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine { return owned(t, f, "down", false, nil) },
			exists: true,
			want: verbWant{events: []string{"Deleting"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if _, ok := f.sim.Guest(ownedVMID); ok {
					t.Error("guest still exists")
				}
				if _, ok := f.sim.Guest(templateID); !ok {
					t.Error("template deleted")
				}
			}},
		},
		"LockedWaits": {
			reason: "A VM locked by a backup waits; nothing is sent.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				return owned(t, f, "busy", false, map[string]string{"lock": "backup"})
			},
			exists: true,
			want: verbWant{noEvents: []string{"ShuttingDown", "Deleting", "Stopping"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				f.guest(t, ownedVMID)
			}},
		},
		"DestroyRefused": {
			reason: "A destroy PVE refuses returns PVE's message; the VM stays.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				f.sim.SetFaults(faultOn("DELETE", "/nodes/*/qemu/*", "Permission check failed (/vms/700, VM.Allocate)"))
				return owned(t, f, "denied", false, nil)
			},
			exists: true,
			want: verbWant{pveText: "Permission check failed", noEvents: []string{"Deleting"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				f.guest(t, ownedVMID)
			}},
		},
		"DeletionProtection": {
			reason: "With deletionProtection the resource is reported gone and the VM kept.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("keep")
				cr.Spec.DeletionProtection = true
				return ownedAs(t, f, cr, true, nil)
			},
			want: verbWant{events: []string{"DeletionProtection"}, noEvents: []string{"ShuttingDown", "Deleting"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if g := f.guest(t, ownedVMID); g.Status != "running" {
					t.Errorf("a protected VM was touched: %s", g.Status)
				}
			}},
		},
		"AlreadyGone": {
			reason: "A VM already gone from PVE is reported gone.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("vanished")
				meta.SetExternalName(cr, "790")
				return pending(t, f, cr)
			},
			want: verbWant{pve: onlyTemplate},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			cr := tc.setup(t, f)
			now := metav1.Now()
			cr.DeletionTimestamp = &now
			e := f.external()
			obs, err := e.Observe(context.Background(), cr)
			got := observed{Exists: obs.ResourceExists, Err: err}
			if diff := cmp.Diff(observed{Exists: tc.exists}, got, cmpopts.EquateErrors()); diff != "" {
				t.Fatalf("%s\nObserve(...): -want, +got:\n%s", tc.reason, diff)
			}
			if obs.ResourceExists {
				_, err = e.Delete(context.Background(), cr)
			}
			tc.want.check(t, tc.reason, f, cr, err)
		})
	}
}
