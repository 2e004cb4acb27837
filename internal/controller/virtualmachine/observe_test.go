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

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Observe: each case seeds PVE and the resource, runs Observe once and checks
// what it reports, the Ready condition and the external name.
func TestObserve(t *testing.T) {
	type want struct {
		exists, upToDate bool
		ready            corev1.ConditionStatus // "" = not checked
		externalName     string                 // "-" means unchanged
		err              error
	}
	cases := map[string]struct {
		reason string
		setup  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine
		want   want
	}{
		"NoVMIDYet": {
			reason: "A resource without an external name has nothing in PVE yet.",
			setup:  func(_ *testing.T, _ *fixture) *v1alpha1.VirtualMachine { return cloneVM("a") },
			want:   want{externalName: "-"},
		},
		"VMIDAbsent": {
			reason: "A VMID PVE does not have is absent, so Create runs.",
			setup: func(_ *testing.T, _ *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("a")
				meta.SetExternalName(cr, "4242")
				return cr
			},
			want: want{externalName: "-"},
		},
		"CloneUnderway": {
			reason: "Our clone still locked and without its marker yet exists, not Ready, and is left alone.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("a")
				meta.SetExternalName(cr, "300")
				seed(t, f, 300, map[string]string{"lock": "clone", "description": " qmclone temporary file\n"})
				return cr
			},
			want: want{exists: true, upToDate: true, ready: corev1.ConditionFalse, externalName: "-"},
		},
		"LostRaceToVM": {
			reason: "Another guest at a VMID we picked means we lost the race: the VMID is dropped.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("a")
				meta.SetExternalName(cr, "301")
				meta.SetExternalCreatePending(cr, time.Now())
				seed(t, f, 301, map[string]string{"name": "someone-else", "cores": "1"})
				f.store(t, cr, false)
				return cr
			},
			want: want{externalName: ""},
		},
		"LostRaceToContainer": {
			reason: "A container at a VMID we picked means we lost the race: the VMID is dropped.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("a")
				meta.SetExternalName(cr, "306")
				meta.SetExternalCreatePending(cr, time.Now())
				if err := f.sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: testNode, VMID: 306, Config: map[string]string{"hostname": "ct"}}); err != nil {
					t.Fatal(err)
				}
				f.store(t, cr, false)
				return cr
			},
			want: want{externalName: ""},
		},
		"ImportObserveOnly": {
			reason: "An imported guest without a marker is observed, Ready, with nothing changed.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "imp", UID: "uid-imp"},
					Spec: v1alpha1.VirtualMachineSpec{ResourceSpec: v1alpha1.ResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}}}}
				meta.SetExternalName(cr, "302")
				seed(t, f, 302, map[string]string{"name": "legacy", "cores": "1"})
				return cr
			},
			want: want{exists: true, upToDate: false, ready: corev1.ConditionTrue, externalName: "-"},
		},
		"MarkerOfAnother": {
			reason: "A guest carrying another resource's marker at a user-set external name is refused.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("a")
				meta.SetExternalName(cr, "303")
				seed(t, f, 303, map[string]string{"description": "crossplane: other/b uid=1234"})
				return cr
			},
			want: want{externalName: "-", err: guest.ErrForeignMarker},
		},
		"MarkerNewUID": {
			reason: "Our marker with the UID before a restore is adopted, the marker's rewrite pending.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("a")
				meta.SetExternalName(cr, "304")
				meta.SetExternalCreatePending(cr, time.Now())
				seed(t, f, 304, map[string]string{"description": "notes\ncrossplane: default/a uid=0000", "name": "a",
					"cores": "4", "sockets": "1", "memory": "4096", "scsi0": "local-lvm:20", "net0": "virtio,bridge=vmbr0"})
				return cr
			},
			want: want{exists: true, upToDate: false, ready: corev1.ConditionFalse, externalName: "-"},
		},
		"DeletingProtected": {
			reason: "A resource being deleted with deletionProtection is reported gone.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachine {
				cr := cloneVM("a")
				cr.Spec.DeletionProtection = true
				now := metav1.Now()
				cr.DeletionTimestamp = &now
				meta.SetExternalName(cr, "305")
				seed(t, f, 305, map[string]string{"description": "crossplane: default/a uid=uid-a"})
				return cr
			},
			want: want{externalName: "-"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			cr := tc.setup(t, f)
			before := meta.GetExternalName(cr)
			obs, err := f.external().Observe(context.Background(), cr)
			got := want{exists: obs.ResourceExists, upToDate: obs.ResourceExists && obs.ResourceUpToDate,
				externalName: meta.GetExternalName(cr), err: err}
			if tc.want.ready != "" {
				got.ready = cr.GetCondition(xpv2.TypeReady).Status
			}
			if got.externalName == before {
				got.externalName = "-"
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s\nObserve(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func seed(t *testing.T, f *fixture, vmid int, cfg map[string]string) {
	t.Helper()
	if err := f.sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: testNode, VMID: vmid, Config: cfg}); err != nil {
		t.Fatalf("seed %d: %v", vmid, err)
	}
}
