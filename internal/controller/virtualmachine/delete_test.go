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

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

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
