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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// policySchedule runs once a day, so the slot a test stages stays the
// latest due for hours.
const policySchedule = "0 3 * * *"

// latestSlot is policySchedule's latest slot not after now.
func latestSlot(now time.Time) time.Time {
	now = now.UTC()
	slot := time.Date(now.Year(), now.Month(), now.Day(), 3, 0, 0, 0, time.UTC)
	if slot.After(now) {
		slot = slot.AddDate(0, 0, -1)
	}
	return slot
}

// applyPolicy creates, in c, the VM of ns and a snapshot policy selecting
// it whose status says the run of slot is due (a policy restored with its
// status, or one whose run the old cluster took just before it was lost):
// the provider takes that run as it starts.
func (c *cluster) applyPolicy(t *testing.T, ns string, slot time.Time) {
	t.Helper()
	ctx := context.Background()
	vm := manifests(ns)[0]
	vm.SetLabels(map[string]string{"snapshots": "daily"})
	p := &v1alpha1.VirtualMachineSnapshotPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "daily"}, Spec: v1alpha1.VirtualMachineSnapshotPolicySpec{
		SnapshotSchedule: policySchedule, LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"snapshots": "daily"}},
	}}
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, vm, p} {
		if err := c.kube.Create(ctx, o); err != nil {
			t.Fatalf("create %s: %v", o.GetName(), err)
		}
	}
	p.Status.ObservedGeneration = p.Generation
	p.Status.NextRunTime = &metav1.Time{Time: slot}
	if err := c.kube.Status().Update(ctx, p); err != nil {
		t.Fatalf("stage the policy's due run: %v", err)
	}
}

// policySnapshotReady reports whether c holds exactly one snapshot resource
// of ns's policy, Ready and Synced, and returns its snapshot name.
func (c *cluster) policySnapshotReady(ns string) (string, bool) {
	l := &v1alpha1.VirtualMachineSnapshotList{}
	if err := c.kube.List(context.Background(), l, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelSnapshotPolicy: "daily"}); err != nil || len(l.Items) != 1 {
		return "", false
	}
	return l.Items[0].Spec.SnapshotName, providertest.ReadyAndSynced(&l.Items[0])
}

// snapshotPosts are the snapshot requests the simulator logged.
func snapshotPosts() []string {
	var out []string
	for _, r := range sideEffects() {
		if strings.HasSuffix(r, "/snapshot") {
			out = append(out, r)
		}
	}
	return out
}

// TestRebuiltClusterTakesNoSecondSnapshotOfARun takes a snapshot policy's
// run on the first cluster, loses that cluster, and applies the VM and the
// policy (its status restored: the same run due) on the second, with the
// opt-in: the second cluster's snapshot resource finds the snapshot by
// name, and Proxmox VE gets no second snapshot for the run.
func TestRebuiltClusterTakesNoSecondSnapshotOfARun(t *testing.T) {
	first.require(t)
	ns := fmt.Sprintf("policy-%d", time.Now().UnixNano()%1000000)
	slot := latestSlot(time.Now())
	second.setAdoption(t, fmt.Sprintf(`{"fromClusters":[%q]}`, first.id))
	t.Cleanup(func() { second.setAdoption(t, "null") })

	sim.ResetCounters()
	first.applyPolicy(t, ns, slot)
	pa := first.start(t)
	var snapName string
	pa.WaitFor(t, "the policy's snapshot Ready on the first cluster", wait, func() bool {
		name, ok := first.policySnapshotReady(ns)
		snapName = name
		return ok
	})
	pa.Kill(t)
	if posts := snapshotPosts(); len(posts) != 1 {
		t.Fatalf("the first cluster sent %v, want one snapshot", posts)
	}
	vm, err := first.get(ns, "vm-0")
	if err != nil {
		t.Fatal(err)
	}
	vmid := providertest.VMIDOf(t, vm)

	sim.ResetCounters()
	second.applyPolicy(t, ns, slot)
	pb := second.start(t)
	pb.WaitFor(t, "the policy's snapshot Ready on the second cluster", wait, func() bool {
		name, ok := second.policySnapshotReady(ns)
		return ok && name == snapName
	})
	time.Sleep(6 * time.Second) // a poll more: nothing may be sent late
	if posts := snapshotPosts(); len(posts) > 0 {
		t.Errorf("the rebuilt cluster sent %v, want no snapshot for the run of %s", posts, slot)
	}
	g, _ := sim.Guest(vmid)
	n := 0
	for _, s := range g.Snapshots {
		if s == snapName {
			n++
		}
	}
	if n != 1 || len(g.Snapshots) != 1 {
		t.Errorf("guest %d has snapshots %v, want only %s", vmid, g.Snapshots, snapName)
	}
}
