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
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func TestObserve(t *testing.T) {
	cases := map[string]struct {
		reason    string
		setup     func(t *testing.T, f *fixture) *v1alpha1.Container
		exists    bool
		upToDate  bool
		diff      string
		details   []string
		noDetails []string
		want      verbWant
	}{
		"NoVMIDYet": {
			reason: "A resource without an external name has nothing in PVE yet.",
			setup:  func(_ *testing.T, _ *fixture) *v1alpha1.Container { return newContainer("fresh", fromOSTemplate) },
		},
		"OwnedAndConverged": {
			reason: "Our running container matching the spec is up to date and Ready, with its connection details.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				return owned(t, f, newContainer("same", fromOSTemplate), true, nil)
			},
			exists: true, upToDate: true, details: []string{"vmid", "node", "ipAddress"}, noDetails: []string{"password"},
			want: verbWant{ready: corev1.ConditionTrue, pve: func(t *testing.T, _ *fixture, cr *v1alpha1.Container) {
				if cr.Status.Status.IPAddress == "" || cr.Status.Status.Node != testNode || cr.Status.Status.State != "running" {
					t.Errorf("status %+v: want running on %s with an address", cr.Status.Status, testNode)
				}
			}},
		},
		"Drift": {
			reason: "Cores, memory, swap and a NIC changed behind our back are drift to correct.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				return owned(t, f, newContainer("drift", fromOSTemplate), true, map[string]string{
					"cores": "4", "memory": "2048", "swap": "0", "net0": "name=eth0,bridge=vmbr9,hwaddr=BC:24:11:00:07:10,ip=dhcp,type=veth",
				})
			},
			exists: true, diff: "cores,memory,swap,net0",
		},
		"WrongGuestType": {
			reason: "A VM at a VMID the user named is an error, never managed or recreated as a container.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				if err := f.sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: testNode, VMID: ownedVMID, Config: map[string]string{"name": "a-vm"}}); err != nil {
					t.Fatal(err)
				}
				cr := newContainer("wrongtype", fromOSTemplate)
				meta.SetExternalName(cr, strconv.Itoa(ownedVMID))
				f.store(t, cr, false)
				return cr
			},
			want: verbWant{err: guest.ErrWrongGuestType},
		},
		"ImportObserveOnly": {
			reason: "An existing container named by the user is observed without a marker or any change.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				cr := &v1alpha1.Container{
					ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "imported", UID: "uid-imported", Generation: 1},
					Spec: v1alpha1.ContainerSpec{ResourceSpec: v1alpha1.ResourceSpec{
						ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}}},
				}
				meta.SetExternalName(cr, strconv.Itoa(ownedVMID))
				f.store(t, cr, false)
				if err := f.sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: testNode, VMID: ownedVMID, Running: true, Config: map[string]string{
					"hostname": "legacy", "rootfs": "local-lvm:2", "description": "someone's container"}}); err != nil {
					t.Fatal(err)
				}
				return cr
			},
			exists: true, upToDate: true,
			want: verbWant{ready: corev1.ConditionTrue, pve: func(t *testing.T, f *fixture, _ *v1alpha1.Container) {
				if d := f.ct(t, ownedVMID).Config["description"]; d != "someone's container" {
					t.Errorf("description = %q: an Observe-only import writes nothing", d)
				}
			}},
		},
		"SourceChanged": {
			reason: "A container created from another ostemplate than the spec names must be replaced.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				cr := owned(t, f, newContainer("newsrc", fromOSTemplate), false, nil)
				meta.AddAnnotations(cr, map[string]string{annotationSource: sourceOSTemplate + "local:vztmpl/alpine-3.21.tar.xz"})
				return cr
			},
			exists: true,
			want: verbWant{pve: func(t *testing.T, _ *fixture, cr *v1alpha1.Container) {
				if cr.Status.Source == nil || cr.Status.Source.OSTemplate != "local:vztmpl/alpine-3.21.tar.xz" {
					t.Errorf("status.source = %+v, want the recorded archive", cr.Status.Source)
				}
			}},
		},
		"DeletedWhileProtected": {
			reason: "A protected resource being deleted lets go of its container, which stays.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				cr := newContainer("kept", fromOSTemplate)
				cr.Spec.DeletionProtection = true
				cr = owned(t, f, cr, true, nil)
				now := metav1.Now()
				cr.SetDeletionTimestamp(&now)
				return cr
			},
			want: verbWant{events: []string{"DeletionProtection"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.Container) {
				f.ct(t, ownedVMID)
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			cr := tc.setup(t, f)
			obs, err := f.external().Observe(context.Background(), cr)
			type result struct {
				Exists, UpToDate bool
				Diff             string
			}
			want := result{Exists: tc.exists, UpToDate: tc.upToDate, Diff: tc.diff}
			got := result{Exists: obs.ResourceExists, UpToDate: obs.ResourceExists && obs.ResourceUpToDate, Diff: obs.Diff}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nObserve(...): -want, +got:\n%s", tc.reason, diff)
			}
			for _, k := range tc.details {
				if len(obs.ConnectionDetails[k]) == 0 {
					t.Errorf("%s\nno connection detail %q", tc.reason, k)
				}
			}
			for _, k := range tc.noDetails {
				if _, ok := obs.ConnectionDetails[k]; ok {
					t.Errorf("%s\nunexpected connection detail %q", tc.reason, k)
				}
			}
			tc.want.check(t, tc.reason, f, cr, err)
		})
	}
}
