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

package guest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

var testFields = Fields{
	{Path: "cores", Key: "cores"},
	{Path: "socket", Key: "sockets"},
	{Path: "numa", Key: "numa"},
	{Path: "balloon", Key: "balloon"},
	{Path: "cpu", Key: "cpu"},
	{Path: "nosuchfield", Key: "x"},
}

func TestFieldsValues(t *testing.T) {
	hw := &v1alpha1.VirtualMachineCloneSpec{VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 2, NUMA: ptr.To(true), CPU: "host"}}
	got := testFields.Values(hw)
	want := map[string]any{"cores": int32(2), "sockets": int32(0), "numa": ptr.To(true), "balloon": (*int64)(nil), "cpu": "host"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Values reads the fields of an inlined struct by JSON name, a missing one is left out: -want, +got:\n%s", diff)
	}
}

func TestFieldsFill(t *testing.T) {
	cases := map[string]struct {
		reason string
		values map[string]any
		want   v1alpha1.VirtualMachineHardware
	}{
		"Decoded": {
			reason: "int64 fits int32 fields, bool and int64 are allocated behind pointers, strings set.",
			values: map[string]any{"cores": int64(4), "sockets": int64(2), "numa": false, "balloon": int64(0), "cpu": "kvm64", "x": "ignored"},
			want:   v1alpha1.VirtualMachineHardware{Cores: 4, Socket: 2, NUMA: ptr.To(false), Balloon: ptr.To[int64](0), CPU: "kvm64"},
		},
		"Unfit": {
			reason: "A value the field cannot hold (too large, wrong type) is left out rather than truncated.",
			values: map[string]any{"cores": int64(1) << 40, "cpu": int64(3)},
			want:   v1alpha1.VirtualMachineHardware{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := v1alpha1.VirtualMachineHardware{}
			testFields.Fill(&got, tc.values)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nFill: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFieldsLateInit(t *testing.T) {
	cases := map[string]struct {
		reason  string
		spec    v1alpha1.VirtualMachineHardware
		values  map[string]any
		want    v1alpha1.VirtualMachineHardware
		changed bool
	}{
		"FillsUnset": {
			reason:  "Unset fields take the guest's values, a false behind a pointer included.",
			values:  map[string]any{"cores": int64(4), "numa": false, "cpu": "host"},
			want:    v1alpha1.VirtualMachineHardware{Cores: 4, NUMA: ptr.To(false), CPU: "host"},
			changed: true,
		},
		"KeepsSet": {
			reason: "A field the spec sets is never overwritten, even when the guest differs.",
			spec:   v1alpha1.VirtualMachineHardware{Cores: 2, NUMA: ptr.To(true)},
			values: map[string]any{"cores": int64(4), "numa": false},
			want:   v1alpha1.VirtualMachineHardware{Cores: 2, NUMA: ptr.To(true)},
		},
		"ZeroIsNoChange": {
			reason: "A zero the field reads as unset is no late-init.",
			values: map[string]any{"cores": int64(0)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.spec
			changed := testFields.LateInit(&got, tc.values)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nLateInit: -want, +got:\n%s", tc.reason, diff)
			}
			if changed != tc.changed {
				t.Errorf("%s\nLateInit reported %t, want %t", tc.reason, changed, tc.changed)
			}
		})
	}
}
