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

package virtualmachinesnapshot

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const ctID = 301

// A snapshot naming a Container snapshots its LXC guest through the lxc
// endpoints, rolls it back once per token (a vzrollback task), and deletes
// it, as for a VM.
func TestContainerSnapshot(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	ctx := context.Background()
	if err := f.sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: testNode, VMID: ctID, Config: map[string]string{"hostname": "ct", "rootfs": "local-lvm:4"}}); err != nil {
		t.Fatal(err)
	}
	ct := &v1alpha1.Container{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ct"}}
	if err := f.kube.Create(ctx, ct); err != nil {
		t.Fatal(err)
	}
	ct.Status.Status.ID, ct.Status.Status.Node = ctID, testNode
	if err := f.kube.Status().Update(ctx, ct); err != nil {
		t.Fatal(err)
	}
	cr := f.snapshotOf(t, "ct-snap", "", func(s *v1alpha1.VirtualMachineSnapshot) {
		s.Spec.VirtualMachineName, s.Spec.ContainerName = "", "ct"
	})
	e := f.external(t, cr)
	if e.target.ref != (pve.GuestRef{Type: pve.LXC, Node: testNode, VMID: ctID}) {
		t.Fatalf("target %+v, want the container's guest", e.target.ref)
	}
	if obs, err := e.Observe(ctx, cr); err != nil || obs.ResourceExists {
		t.Fatalf("Observe before create: %+v, %v", obs, err)
	}
	if _, err := e.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	f.waitTasks(t, cr)
	ctRef := pve.GuestRef{Type: pve.LXC, Node: testNode, VMID: ctID}
	snaps, err := f.cl.Snapshots(ctx, ctRef)
	if err != nil || !slices.ContainsFunc(snaps, func(s pve.Snapshot) bool { return s.Name == meta.GetExternalName(cr) }) {
		t.Fatalf("the container's snapshots %+v, %v; want %s", snaps, err, meta.GetExternalName(cr))
	}

	meta.AddAnnotations(cr, map[string]string{v1alpha1.AnnotationRollback: "one"})
	f.reconcile(t, cr)
	f.reconcile(t, cr)
	if rb := cr.Status.Rollback; rb == nil || rb.Task == nil || rb.Task.Type != "vzrollback" || rb.Task.ExitStatus != "OK" {
		t.Fatalf("rollback %+v, want one vzrollback that succeeded", rb)
	}

	e = f.external(t, cr)
	if _, err := e.Observe(ctx, cr); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Delete(ctx, cr); err != nil {
		t.Fatal(err)
	}
	f.waitTasks(t, cr)
	if snaps, _ := f.cl.Snapshots(ctx, ctRef); slices.ContainsFunc(snaps, func(s pve.Snapshot) bool { return s.Name == meta.GetExternalName(cr) }) {
		t.Errorf("the snapshot is still there: %+v", snaps)
	}
}
