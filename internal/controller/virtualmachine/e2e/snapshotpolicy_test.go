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

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// Deleting a policy whose snapshots go with it wakes the running controller
// (the API server bumps the generation when it sets the deletion
// timestamp): the snapshots it made are deleted, then the policy goes,
// without anything else touching it.
func TestDeletingASnapshotPolicyWakesItsController(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	ctx := context.Background()
	p := &v1alpha1.VirtualMachineSnapshotPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"}, Spec: v1alpha1.VirtualMachineSnapshotPolicySpec{
		SnapshotSchedule:       "0 3 * * *",
		LabelSelector:          metav1.LabelSelector{MatchLabels: map[string]string{"tier": "none"}},
		SnapshotDeletionPolicy: v1alpha1.SnapshotDeletionDelete,
	}}
	if err := hs.Kube.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	waitPolicy(t, hs, ns, p.Name, "holding its finalizer", func(got *v1alpha1.VirtualMachineSnapshotPolicy) bool {
		return controllerutil.ContainsFinalizer(got, "proxmox.alperen.cloud/snapshot-policy")
	})
	// A snapshot as one of the policy's runs makes it.
	vmid := int32(providertest.FreeVMID(t, hs.Sim, 760)) //nolint:gosec // VMIDs are below 1e9
	snap := &v1alpha1.VirtualMachineSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly-run", Labels: map[string]string{
		v1alpha1.LabelSnapshotPolicy: p.Name, v1alpha1.LabelSnapshotPolicyNamespace: ns, v1alpha1.LabelVirtualMachine: "gone",
	}}, Spec: v1alpha1.VirtualMachineSnapshotSpec{VMID: &vmid, NodeName: node,
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}}}}
	if err := hs.Kube.Create(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if err := hs.Kube.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for {
		errSnap := hs.Kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: snap.Name}, &v1alpha1.VirtualMachineSnapshot{})
		errPolicy := hs.Kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: p.Name}, &v1alpha1.VirtualMachineSnapshotPolicy{})
		if kerrors.IsNotFound(errSnap) && kerrors.IsNotFound(errPolicy) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after deleting the policy: snapshot %v, policy %v; want both gone", errSnap, errPolicy)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func waitPolicy(t *testing.T, hs *harness, ns, name, what string, cond func(*v1alpha1.VirtualMachineSnapshotPolicy) bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		got := &v1alpha1.VirtualMachineSnapshotPolicy{}
		err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, got)
		if err == nil && cond(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("policy %s never %s: %v", name, what, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
