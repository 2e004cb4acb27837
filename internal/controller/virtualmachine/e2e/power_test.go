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

package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// A VM created with powerState Stopped is never started and is Ready
// stopped; switching the spec to Running starts it, and back to Stopped
// shuts it down, with the printer column's source showing the desired state.
func TestPowerStateFollowsTheSpec(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	spec := cloneSpec("power")
	spec.PowerState = v1alpha1.PowerStateStopped
	vm := hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "power"}, Spec: spec})
	vm = hs.waitReady(t, ns, vm.Name)
	vmid := providertest.VMIDOf(t, vm)
	if g, _ := hs.Sim.Guest(vmid); g.Status != "stopped" {
		t.Fatalf("a VM created with powerState Stopped is %s", g.Status)
	}
	if vm.Status.Status.State != "stopped" {
		t.Errorf("status.status.state = %q, want stopped", vm.Status.Status.State)
	}

	setPowerState(t, hs, ns, vm.Name, v1alpha1.PowerStateRunning)
	hs.WaitEvent(t, ns, vm.Name, "Started", wait)
	waitGuestStatus(t, hs, vmid, "running")

	setPowerState(t, hs, ns, vm.Name, v1alpha1.PowerStateStopped)
	hs.WaitEvent(t, ns, vm.Name, "ShuttingDown", wait)
	waitGuestStatus(t, hs, vmid, "stopped")
	hs.waitVM(t, ns, vm.Name, "Ready and stopped", func(v *v1alpha1.VirtualMachine) bool {
		return ready(v) && v.Status.Status.State == "stopped"
	})
}

func setPowerState(t *testing.T, hs *harness, ns, name string, p v1alpha1.PowerState) {
	t.Helper()
	patch := []byte(`{"spec":{"powerState":"` + string(p) + `"}}`)
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := hs.Kube.Patch(context.Background(), vm, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("set powerState %s: %v", p, err)
	}
}

func waitGuestStatus(t *testing.T, hs *harness, vmid int, status string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		g, _ := hs.Sim.Guest(vmid)
		if g.Status == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("VM %d is %s, want %s", vmid, g.Status, status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
