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

package adoptione2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// TestOldMarkerUpgradedOnce gives a managed VM's guest the marker of an
// older provider (no kind, no cluster): the provider rewrites it in the
// current format with one config write, and then leaves it alone.
func TestOldMarkerUpgradedOnce(t *testing.T) {
	first.require(t)
	ns := fmt.Sprintf("upgrade-%d", time.Now().UnixNano()%1000000)
	if err := first.kube.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	p := first.start(t)
	vm := manifests(ns)[0]
	if err := first.kube.Create(context.Background(), vm); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, "VM Ready", wait, func() bool {
		mg, err := first.get(ns, vm.GetName())
		return err == nil && isReady(mg)
	})
	mg, err := first.get(ns, vm.GetName())
	if err != nil {
		t.Fatal(err)
	}
	vmid := providertest.VMIDOf(t, mg)
	current := func() string { g, _ := sim.Guest(vmid); return g.Config["description"] }
	want := current()
	old := fmt.Sprintf("notes\ncrossplane: %s/%s uid=%s", ns, vm.GetName(), mg.GetUID())
	sim.ResetCounters()
	if err := sim.SetGuestConfig(vmid, "description", old); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, "the old marker upgraded", wait, func() bool { return current() == "notes\n"+lastLine(want) })
	time.Sleep(6 * time.Second) // a poll more: no second write
	if _, configs := writes(); configs[vmid] != 1 {
		t.Errorf("config writes %v, want one for %d (the marker)", configs, vmid)
	}
}

// lastLine is the last line of s.
func lastLine(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}
