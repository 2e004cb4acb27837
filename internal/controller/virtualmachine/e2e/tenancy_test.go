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
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// TestConnectionAllowsOneNamespace gives a team its own connection allowing
// only the team's namespace: the team's VirtualMachine becomes Ready through
// it, while another namespace's VirtualMachine, and a VirtualMachineSnapshot
// in vmid form aimed at a guest, are refused with Synced=False naming the
// namespace and the connection, and the simulator receives no request for
// either of them.
func TestConnectionAllowsOneNamespace(t *testing.T) {
	hs := require(t)
	ctx := context.Background()
	allowed, other := hs.namespace(t), hs.namespace(t)
	const (
		conn   = "team-a"
		token  = "team-a@pve!crossplane"
		secret = "team-a-secret"
	)
	hs.Sim.AddToken(token, secret)
	if err := hs.CreateTokenConnection(ctx, conn, token, credNS, "team-a-credentials", secret); err != nil {
		t.Fatal(err)
	}
	pc := &v1alpha1.ProxmoxConnection{}
	if err := hs.Kube.Get(ctx, types.NamespacedName{Name: conn}, pc); err != nil {
		t.Fatal(err)
	}
	base := pc.DeepCopy()
	pc.Spec.AllowedNamespaces = &v1alpha1.AllowedNamespaces{Names: []string{allowed}}
	if err := hs.Kube.Patch(ctx, pc, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hs.Kube.Delete(context.Background(), pc) })
	if err := hs.WaitConnectionReady(ctx, conn, wait); err != nil {
		t.Fatal(err)
	}

	// The allowed namespace's VM works through the connection.
	spec := cloneSpec("team-a-vm")
	spec.ConnectionRef = &v1alpha1.ConnectionReference{Name: conn}
	mine := hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: allowed, Name: "team-a-vm"}, Spec: spec})
	hs.waitReady(t, allowed, mine.Name)
	hs.delete(t, mine)
	hs.waitGone(t, allowed, mine.Name)

	// A guest of team A's another namespace aims at by VMID.
	victim := providertest.FreeVMID(t, hs.Sim, 780)
	victimID := int32(victim) //nolint:gosec // VMIDs are below 1e9
	if err := hs.Sim.AddGuest(pvesim.GuestSeed{Node: node, VMID: victim, Config: map[string]string{"name": "team-a-db"}}); err != nil {
		t.Fatal(err)
	}
	fp := pvesim.CredentialFingerprint(secret)
	since := time.Now()

	spec = cloneSpec("intruder")
	spec.ConnectionRef = &v1alpha1.ConnectionReference{Name: conn}
	hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "intruder"}, Spec: spec})
	snap := &v1alpha1.VirtualMachineSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "grab"}, Spec: v1alpha1.VirtualMachineSnapshotSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: conn}},
		VMID:         ptr.To(victimID), NodeName: node,
	}}
	if err := hs.Kube.Create(ctx, snap); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("namespace %q may not use ProxmoxConnection %q", other, conn)
	refused := func(c interface {
		GetCondition(xpv2.ConditionType) xpv2.Condition
	}) bool {
		s := c.GetCondition(xpv2.TypeSynced)
		return s.Status == corev1.ConditionFalse && strings.Contains(s.Message, want)
	}
	hs.waitVM(t, other, "intruder", "refused (Synced=False naming the namespace and connection)", func(vm *v1alpha1.VirtualMachine) bool { return refused(vm) })
	hs.WaitFor(t, snap, "refused (Synced=False naming the namespace and connection)", wait, func() bool { return refused(snap) })

	// Let both retry at least once more before looking at what reached PVE.
	time.Sleep(3 * time.Second)
	for _, r := range hs.Sim.RequestLog() {
		if r.Time.Before(since) || r.Fingerprint != fp {
			continue
		}
		// The connection's own check (GET /version) is all that may use
		// team A's token meanwhile.
		if r.Path != "/version" {
			t.Errorf("a request reached Proxmox VE with team A's token after only refused resources used it: %s %s", r.Method, r.Path)
		}
	}
	g, ok := hs.Sim.Guest(victim)
	if !ok {
		t.Fatalf("guest %d is gone", victim)
	}
	if len(g.Snapshots) != 0 {
		t.Errorf("the refused snapshot reached guest %d: snapshots %v", victim, g.Snapshots)
	}
	if n := len(providertest.MarkedGuests(hs.Sim, other, "intruder")); n != 0 {
		t.Errorf("the refused VirtualMachine has %d guests, want none", n)
	}
}

// TestExternalNameCannotTakeAnotherNamespacesGuest points a VirtualMachine
// in one namespace, by external name, at the guest of a VirtualMachine in
// another namespace: its marker names the other resource, so the newcomer
// is refused (Synced=False, ErrForeignMarker's message) and the guest keeps
// its owner's configuration and marker, even with a spec that differs.
func TestExternalNameCannotTakeAnotherNamespacesGuest(t *testing.T) {
	hs := require(t)
	owner, intruder := hs.namespace(t), hs.namespace(t)
	vm := hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: owner, Name: "db"}, Spec: cloneSpec("db")})
	vm = hs.waitReady(t, owner, vm.Name)
	vmid := providertest.VMIDOf(t, vm)
	before, ok := hs.Sim.Guest(vmid)
	if !ok {
		t.Fatalf("guest %d of %s/db is missing", vmid, owner)
	}

	spec := cloneSpec("db")
	spec.Template.Cores = 8
	spec.Template.Memory = 8192
	take := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{
		Namespace: intruder, Name: "db",
		Annotations: map[string]string{meta.AnnotationKeyExternalName: strconv.Itoa(vmid)},
	}, Spec: spec}
	hs.create(t, take)
	want := fmt.Sprintf("%d does not carry this resource's marker", vmid)
	hs.waitVM(t, intruder, "db", "refused (Synced=False: foreign marker)", func(vm *v1alpha1.VirtualMachine) bool {
		s := vm.GetCondition(xpv2.TypeSynced)
		return s.Status == corev1.ConditionFalse && strings.Contains(s.Message, want)
	})
	// Past the intruder's next reconciles: nothing of its spec arrives.
	time.Sleep(3 * time.Second)
	after, _ := hs.Sim.Guest(vmid)
	for _, key := range []string{"cores", "memory", "description"} {
		if after.Config[key] != before.Config[key] || after.Pending[key] != "" {
			t.Errorf("guest %d's %s changed from %q to %q (pending %q): the intruder acted on it", vmid, key, before.Config[key], after.Config[key], after.Pending[key])
		}
	}

	// Deleting the intruder leaves the guest to its owner.
	hs.delete(t, take)
	hs.waitGone(t, intruder, "db")
	if _, ok := hs.Sim.Guest(vmid); !ok {
		t.Fatalf("deleting %s/db deleted %s/db's guest %d", intruder, owner, vmid)
	}
	hs.waitReady(t, owner, "db")
	hs.delete(t, vm)
	hs.waitGone(t, owner, "db")
}
