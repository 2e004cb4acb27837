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

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

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
