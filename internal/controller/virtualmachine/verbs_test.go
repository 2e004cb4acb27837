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
	// err is a substring of the returned error; "" means no error.
	err string
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

func (w verbWant) check(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine, err error) {
	t.Helper()
	guesttest.Want{Err: w.err, Events: w.events, NoEvents: w.noEvents, Secret: w.secret, Ready: w.ready, ReadyMsg: w.readyMsg}.Check(t, f.log, cr, err)
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
		sim   pvesim.Options
		setup func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine
		want  verbWant
	}{
		"clone: VMID stored on the resource, then cloned with our marker": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine { return pending(t, f, cloneVM("web")) },
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
		"linked clone on request": {
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
		"template without a name: created from scratch, with an event": {
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
		"vmSpec: created from scratch with cloud-init": {
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
		"VMID already stored and free: reused, no other picked": {
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
		"VMID stored but taken by another guest meanwhile: left to Observe's marker rules, squatter untouched": {
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
		"previous clone task failed with 'already exists', no guest there now: retried at the same VMID": {
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
		"previous create task still running: no second request": {
			sim: pvesim.Options{TaskDurations: map[string]time.Duration{"qmclone": time.Minute}},
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
		"previous clone task failed otherwise: PVE's message, VMID kept": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := pending(t, f, cloneVM("broken"))
				failNextCloneTask(t, f, cr, "storage 'local-lvm' is full")
				return cr
			},
			want: verbWant{err: "storage 'local-lvm' is full", noEvents: []string{"VMIDTaken"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if got, _ := guest.VMIDOf(meta.GetExternalName(cr)); got != firstVMID(cr) {
					t.Errorf("external name = %q, want the VMID %d kept", meta.GetExternalName(cr), firstVMID(cr))
				}
				if cr.GetAnnotations()[guest.AnnotationCreateTask] != "" {
					t.Error("the failed task is still recorded: it would fail every retry")
				}
				onlyTemplate(t, f, cr)
			}},
		},
		"template busy with another clone: quiet retry, no error": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				f.sim.SetFaults(faultOn("POST", "/nodes/*/qemu/*/clone", "can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout"))
				return pending(t, f, cloneVM("busy"))
			},
			want: verbWant{events: []string{"SourceBusy"}, noEvents: []string{"Cloning"}, pve: onlyTemplate},
		},
		"clone refused by PVE: error with PVE's message, nothing created": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				f.sim.SetFaults(faultOn("POST", "/nodes/*/qemu/*/clone", "storage 'local-lvm' does not exist"))
				return pending(t, f, cloneVM("refused"))
			},
			want: verbWant{err: "storage 'local-lvm' does not exist", noEvents: []string{"Cloning"}, pve: onlyTemplate},
		},
		"template missing: error naming it, before any VMID is picked": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("orphan")
				cr.Spec.Template.Name = "no-such-template"
				return pending(t, f, cr)
			},
			want: verbWant{err: `template "no-such-template" not found`, pve: nothingPicked},
		},
		"ISO missing: refused before any VMID is picked, naming the volume": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := scratchVM("noiso")
				cr.Spec.VMSpec.OSImage = &v1alpha1.OSImage{Name: "ide2", Value: "local:iso/missing.iso"}
				return pending(t, f, cr)
			},
			want: verbWant{err: `volume "local:iso/missing.iso" does not exist on node "` + testNode + `"`, pve: nothingPicked},
		},
		"ISO present: created": {
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
		"disk storage missing: refused naming the storages there are": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := scratchVM("nostorage")
				cr.Spec.VMSpec.Disk[0].Storage = "ceph-pool"
				return pending(t, f, cr)
			},
			want: verbWant{err: `storage "ceph-pool" does not exist on node "` + testNode + `" (storages: local, local-lvm)`, pve: nothingPicked},
		},
		"disk storage without images: refused naming its content": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := scratchVM("isostorage")
				cr.Spec.VMSpec.Disk[0].Storage = "local"
				return pending(t, f, cr)
			},
			want: verbWant{err: `storage "local" on node "` + testNode + `" does not hold VM disks`, pve: nothingPicked},
		},
		"bridge missing: refused before the first start would fail": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("nobridge")
				cr.Spec.Template.Network[0].Bridge = "vmbr9"
				return pending(t, f, cr)
			},
			want: verbWant{err: `bridge "vmbr9" does not exist on node "` + testNode + `" (bridges: vmbr0)`, pve: nothingPicked},
		},
		"node missing: refused naming the cluster's nodes": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("nonode")
				cr.Spec.NodeName = "pve-nope"
				return pending(t, f, cr)
			},
			want: verbWant{err: `node "pve-nope" is not in the Proxmox VE cluster`, pve: nothingPicked},
		},
		"password Secret missing: error before any VMID is picked": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("nopass")
				cr.Spec.Template.CloudInitConfig = &v1alpha1.CloudInitConfig{User: "u",
					PasswordFrom: &v1alpha1.OptionalSecretKeySelector{LocalSecretKeySelector: v1alpha1.LocalSecretKeySelector{Name: "missing", Key: "password"}}}
				return pending(t, f, cr)
			},
			want: verbWant{err: "missing", pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if meta.GetExternalName(cr) != "" || f.storedExternalName(t, cr) != "" {
					t.Errorf("a VMID was picked: %q", meta.GetExternalName(cr))
				}
				onlyTemplate(t, f, cr)
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.sim)
			cr := tc.setup(t, f)
			_, err := f.external().Create(context.Background(), cr)
			tc.want.check(t, f, cr, err)
		})
	}
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
		sim      pvesim.Options
		setup    func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine
		upToDate bool
		want     verbWant
	}{
		"in sync: up to date, Ready, nothing sent": {
			setup:    func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine { return owned(t, f, "calm", true, nil) },
			upToDate: true,
			want: verbWant{ready: corev1.ConditionTrue, noEvents: []string{"Configured", "DriftCorrected", "Started"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if w := writes(f); len(w) > 0 {
					t.Errorf("PVE changed although in sync: %v", w)
				}
			}},
		},
		"cores drifted on a running VM: corrected with a warning, left pending for a reboot": {
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
		"bridge drifted: corrected, the MAC and options the user did not set kept": {
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
		"spec changed: Configured, not reported as drift": {
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
		"stopped VM with enableAutoStart: started": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine { return owned(t, f, "off", false, nil) },
			want: verbWant{ready: corev1.ConditionFalse, events: []string{"Started"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if g := f.guest(t, ownedVMID); g.Status != "running" {
					t.Errorf("status = %s, want running", g.Status)
				}
				if lt := cr.Status.LastTask; lt == nil || lt.Type != "qmstart" {
					t.Errorf("last task = %+v, want qmstart", lt)
				}
			}},
		},
		"stopped VM with enableAutoStart false: left stopped": {
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
		"pending change on a running VM: one reboot applies it": {
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
		"pending change with rebootPolicy Never: no reboot, keys in status": {
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
		"disk smaller than the spec: grown by resize": {
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
		"disk larger than the spec: shrink refused with an error, disk kept": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				return owned(t, f, "big", true, map[string]string{"scsi0": "local-lvm:40"})
			},
			want: verbWant{err: "never shrunk", noEvents: []string{"Resized"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if got := f.guest(t, ownedVMID).Config["scsi0"]; !strings.Contains(got, "size=40G") {
					t.Errorf("scsi0 = %q, want 40G untouched", got)
				}
			}},
		},
		"disk on another storage: refused, never moved": {
			sim: pvesim.Options{SharedStorage: "ceph"},
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				return owned(t, f, "elsewhere", true, map[string]string{"scsi0": "ceph:20"})
			},
			want: verbWant{err: "not moved automatically", pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				if got := f.guest(t, ownedVMID).Config["scsi0"]; !strings.HasPrefix(got, "ceph:") {
					t.Errorf("scsi0 = %q, want still on ceph", got)
				}
			}},
		},
		"disk added to the spec: allocated": {
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
		"new disk refused before forking (locked since Observe): quiet retry, no task followed": {
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
		"our marker with an old UID (restored object): marker rewritten, notes kept": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				return owned(t, f, "restored", true, map[string]string{"description": "ops notes\ncrossplane: default/restored uid=0000"})
			},
			want: verbWant{events: []string{"Adopted"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				if got := f.guest(t, ownedVMID).Config["description"]; got != "ops notes\n"+guest.MarkerOf(cr).String() {
					t.Errorf("description = %q", got)
				}
			}},
		},
		"guest locked by a backup: nothing changes while PVE works": {
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
		"PVE answers locked on the config write: quiet retry, no event": {
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
		"PVE refuses the config: error with PVE's message, the password scrubbed": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				f.sim.SetFaults(faultOn("PUT", "/nodes/*/qemu/*/config", "cipassword 'pw-canary-77': value rejected"))
				cr := cloneVM("pw")
				cr.Spec.Template.CloudInitConfig = &v1alpha1.CloudInitConfig{User: "u", Password: "pw-canary-77"}
				return ownedAs(t, f, cr, true, map[string]string{"ciuser": "u"})
			},
			want: verbWant{err: "value rejected", secret: "pw-canary-77", noEvents: []string{"PasswordApplied"}, pve: func(t *testing.T, _ *fixture, cr *v1alpha1.VirtualMachine) {
				if cr.Status.CloudInitPasswordApplied != nil {
					t.Errorf("password recorded as applied: %+v", cr.Status.CloudInitPasswordApplied)
				}
			}},
		},
		"inline password never applied: applied, the generation recorded, not the password": {
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
			if err != nil {
				t.Fatalf("Observe: %v", err)
			}
			if !obs.ResourceExists || obs.ResourceUpToDate != tc.upToDate {
				t.Fatalf("Observe: exists=%v upToDate=%v (diff %q), want true %v", obs.ResourceExists, obs.ResourceUpToDate, obs.Diff, tc.upToDate)
			}
			if !obs.ResourceUpToDate {
				_, err = e.Update(context.Background(), cr)
			}
			tc.want.check(t, f, cr, err)
		})
	}
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
		setup  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine
		exists bool
		want   verbWant
	}{
		"running VM: graceful shutdown first, not destroyed yet": {
			setup:  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine { return owned(t, f, "up", true, nil) },
			exists: true,
			want: verbWant{events: []string{"ShuttingDown"}, noEvents: []string{"Deleting"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) {
				f.guest(t, ownedVMID)
				if lt := cr.Status.LastTask; lt == nil || lt.Type != "qmshutdown" {
					t.Errorf("last task = %+v, want qmshutdown", lt)
				}
			}},
		},
		"shutdown done but the VM still runs: stopped": {
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
		"stopped VM: destroyed with purge, the template kept": {
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
		"VM locked by a backup: waits, nothing sent": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				return owned(t, f, "busy", false, map[string]string{"lock": "backup"})
			},
			exists: true,
			want: verbWant{noEvents: []string{"ShuttingDown", "Deleting", "Stopping"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				f.guest(t, ownedVMID)
			}},
		},
		"destroy refused by PVE: error with PVE's message": {
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				f.sim.SetFaults(faultOn("DELETE", "/nodes/*/qemu/*", "Permission check failed (/vms/700, VM.Allocate)"))
				return owned(t, f, "denied", false, nil)
			},
			exists: true,
			want: verbWant{err: "Permission check failed", noEvents: []string{"Deleting"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
				f.guest(t, ownedVMID)
			}},
		},
		"deletionProtection: reported gone, the VM kept": {
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
		"VM already gone: reported gone": {
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
			if err != nil {
				t.Fatalf("Observe: %v", err)
			}
			if obs.ResourceExists != tc.exists {
				t.Fatalf("Observe: exists=%v, want %v", obs.ResourceExists, tc.exists)
			}
			if obs.ResourceExists {
				_, err = e.Delete(context.Background(), cr)
			}
			tc.want.check(t, f, cr, err)
		})
	}
}
