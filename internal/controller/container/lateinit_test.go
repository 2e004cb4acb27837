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
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// observedSamples are wire values of a key by its codec: late-init must
// carry one of them into the row's field (a Leading key is a number or a
// name, depending on the field).
var observedSamples = map[pve.Codec][]string{
	pve.Text: {"x7"}, pve.Number: {"7"}, pve.Bool: {"1"}, pve.List: {"a b"}, pve.Leading: {"7", "host"},
}

// Every row of the Container's field tables late-inits: a value the
// container has reaches the unset spec field, and the spec then asks for
// nothing the container does not already have. No row is listed here.
func TestLateInitEveryRow(t *testing.T) {
	guesttest.EveryRowLateInits(t, []guesttest.LateInitTable{
		{Fields: append(append(guest.Fields{}, SpecFields...), TemplateFields...), Table: pve.LXCFields},
		{Fields: NetworkFields, Table: pve.LXCNICFields, NIC: true},
	}, observedSamples, lateInitLeavesNoDiff)
}

// lateInitLeavesNoDiff late-inits an empty container spec from a config
// holding key=v (in net0 for a NIC option) and reports whether it set a
// field; when it did, the spec must then ask for nothing the container
// does not already have.
func lateInitLeavesNoDiff(t *testing.T, key, v string, nic bool) bool {
	t.Helper()
	cfg := pve.GuestConfig{key: {Value: v, HasValue: true}}
	cr := &v1alpha1.Container{Spec: v1alpha1.ContainerSpec{Template: &v1alpha1.ContainerTemplate{}}}
	if nic {
		// The import reads a NIC with a bridge and a tag other than 0.
		opts := map[string]string{"name": "eth0", "bridge": "vmbr0", key: v}
		parts := make([]string, 0, len(opts))
		for _, k := range slices.Sorted(maps.Keys(opts)) {
			parts = append(parts, k+"="+opts[k])
		}
		cfg = pve.GuestConfig{"net0": {Value: strings.Join(parts, ","), HasValue: true}}
		cr.Spec.Template.Network = []v1alpha1.ContainerNetwork{{}}
	}
	if !lateInit(&cr.Spec, cfg) {
		return false
	}
	want, err := desiredFrom(context.Background(), nil, cr)
	if err != nil {
		t.Fatal(err)
	}
	if p := pve.DiffLXC(want.Spec, cfg); !p.Empty() {
		t.Errorf("after late-init from %s=%s the spec still asks for %v", key, v, p.Set)
	}
	return true
}

// Late-init never changes what the spec sets.
func TestLateInitKeepsTheSpec(t *testing.T) {
	cfg := pve.GuestConfig{"cores": {Value: "4", HasValue: true}, "hostname": {Value: "web", HasValue: true}}
	got := v1alpha1.ContainerSpec{Name: "db", Template: &v1alpha1.ContainerTemplate{Cores: 2}}
	want := got.DeepCopy()
	if lateInit(&got, cfg) {
		t.Error("lateInit reported a change to a spec that sets every observed field")
	}
	if diff := cmp.Diff(*want, got); diff != "" {
		t.Errorf("fields the spec sets are kept: -want, +got:\n%s", diff)
	}
}
