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

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// observedSamples are wire values of a key by its codec: late-init must
// carry one of them into the row's field (Leading keys are a number or a
// name, depending on the field).
var observedSamples = map[pve.Codec][]string{
	pve.Text:    {"BC:24:11:00:00:07"},
	pve.Number:  {"7"},
	pve.Bool:    {"1"},
	pve.List:    {"a;b"},
	pve.Leading: {"7", "host"},
}

// Every row of the VirtualMachine's field tables late-inits: a value the
// guest has reaches the unset spec field, and the spec then asks for
// nothing the guest does not already have. No row is listed here: a new row
// is covered by being added.
func TestLateInitEveryRow(t *testing.T) {
	guesttest.EveryRowLateInits(t, []guesttest.LateInitTable{
		{Fields: append(append(guest.Fields{}, SpecFields...), HardwareFields...), Table: pve.QEMUFields},
		{Fields: NetworkFields, Table: pve.QEMUNICFields, NIC: true},
	}, observedSamples, lateInitLeavesNoDiff)
}

// lateInitLeavesNoDiff late-inits an empty VM spec from a config holding
// key=v (in net0 for a NIC option) and reports whether it set a field; when
// it did, the spec must then ask for nothing the guest does not already have.
func lateInitLeavesNoDiff(t *testing.T, key, v string, nic bool) bool {
	t.Helper()
	cfg := pve.GuestConfig{key: {Value: v, HasValue: true}}
	cr := &v1alpha1.VirtualMachine{Spec: v1alpha1.VirtualMachineSpec{VMSpec: &v1alpha1.VirtualMachineScratchSpec{}}}
	if nic {
		cfg = pve.GuestConfig{"net0": {Value: "model=virtio," + key + "=" + v, HasValue: true}}
		cr.Spec.VMSpec.Network = []v1alpha1.VirtualMachineNetwork{{Model: "virtio"}}
	}
	if !lateInit(&cr.Spec, cfg) {
		return false
	}
	want, err := desiredFrom(context.Background(), nil, cr)
	if err != nil {
		t.Fatal(err)
	}
	if p := pve.Diff(want.Spec, cfg); !p.Empty() {
		t.Errorf("after late-init from %s=%s the spec still asks for %v", key, v, p.Set)
	}
	return true
}

// Late-init never changes what the spec sets, makes no section the spec
// lacks, and reports when it set nothing.
func TestLateInitKeepsTheSpec(t *testing.T) {
	cfg := pve.GuestConfig{"cores": {Value: "4", HasValue: true}, "tags": {Value: "a", HasValue: true},
		"net0": {Value: "virtio=BC:24:11:00:00:01,bridge=vmbr0", HasValue: true}}
	cases := map[string]struct {
		reason  string
		spec    v1alpha1.VirtualMachineSpec
		want    v1alpha1.VirtualMachineSpec
		changed bool
	}{
		"SetKept": {
			reason: "cores set to 2 stays 2; unset tags are filled.",
			spec:   v1alpha1.VirtualMachineSpec{Template: &v1alpha1.VirtualMachineCloneSpec{Name: "t", VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 2}}},
			want: v1alpha1.VirtualMachineSpec{Tags: []string{"a"},
				Template: &v1alpha1.VirtualMachineCloneSpec{Name: "t", VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 2}}},
			changed: true,
		},
		"NoHardwareMade": {
			reason:  "A spec with no hardware section gets none: only its own fields are filled.",
			spec:    v1alpha1.VirtualMachineSpec{Tags: []string{"b"}},
			want:    v1alpha1.VirtualMachineSpec{Tags: []string{"b"}},
			changed: false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.spec
			changed := lateInit(&got, cfg)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nlateInit: -want, +got:\n%s", tc.reason, diff)
			}
			if changed != tc.changed {
				t.Errorf("%s\nlateInit reported %t, want %t", tc.reason, changed, tc.changed)
			}
		})
	}
}
