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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// Changing spec.nodeName live-migrates the running VM: same VMID, same
// resource, events at start and end, status.lastMigration and the Migrated
// condition say how it went.
func TestNodeNameChangeMigratesTheVM(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	vm := hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mover"}, Spec: cloneSpec("mover")})
	vm = hs.waitReady(t, ns, vm.Name)
	vmid := providertest.VMIDOf(t, vm)

	patch := []byte(`{"spec":{"nodeName":"othernode"}}`)
	if err := hs.Kube.Patch(context.Background(), vm, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	hs.WaitEvent(t, ns, vm.Name, "Migrating", wait)
	hs.WaitEvent(t, ns, vm.Name, "Migrated", wait)
	vm = hs.waitVM(t, ns, vm.Name, "migrated and Ready", func(v *v1alpha1.VirtualMachine) bool {
		lm := v.Status.LastMigration
		return ready(v) && lm != nil && lm.Result == v1alpha1.MigrationSucceeded && v.Status.Status.Node == "othernode"
	})
	if g, _ := hs.Sim.Guest(vmid); g.Node != "othernode" || g.Status != "running" {
		t.Errorf("VM %d on %s, %s; want running on othernode", vmid, g.Node, g.Status)
	}
	if got := providertest.VMIDOf(t, vm); got != vmid {
		t.Errorf("VMID changed from %d to %d", vmid, got)
	}
	if c := vm.GetCondition(v1alpha1.TypeMigrated); c.Status != corev1.ConditionTrue || !vm.Status.LastMigration.Online {
		t.Errorf("Migrated condition %+v, lastMigration %+v", c, vm.Status.LastMigration)
	}
	if err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: vm.Name}, vm); err != nil {
		t.Fatal(err)
	}
	if vm.Status.RequestedNode != "othernode" {
		t.Errorf("requestedNode %q", vm.Status.RequestedNode)
	}
}
