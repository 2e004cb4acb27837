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
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/virtualmachineset"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// A VirtualMachineSet of 3 spread over the four nodes puts one VM on each
// online node (pve3 is offline: NodesSkipped says so); scaled to 5 the two
// new VMs go where the set has fewest, by free memory (pve2, then pve1), so
// no node holds more than one VM above another; none of the first three
// moved.
func TestVirtualMachineSetSpread(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "place-set-")
	ctx := context.Background()
	set := &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: v1alpha1.VirtualMachineSetSpec{
		Replicas: 3, ConnectionRef: &v1alpha1.ConnectionReference{Name: connName},
		Placement: &v1alpha1.SetPlacementSpec{AllowedNodes: allNodes, Spread: v1alpha1.PlacementSpreadNodes},
		Template:  v1alpha1.VirtualMachineCloneSpec{Name: vmTemplate, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 1024}},
	}}
	mustCreate(t, set)
	set = waitFor(t, set, "3 Ready", func(s *v1alpha1.VirtualMachineSet) bool { return s.Status.ReadyReplicas == 3 })
	if c := set.Status.GetCondition(virtualmachineset.TypeNodesSkipped); c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, "pve3: status offline") {
		t.Errorf("NodesSkipped: %+v", c)
	}
	first := nodesOf(t, ns, 3)
	if diff := countNodes(first); diff != "pve1=1 pve2=1 pve4=1" {
		t.Errorf("3 VMs over pve1, pve2, pve4: got %s", diff)
	}

	set.Spec.Replicas = 5
	if err := h.Kube.Update(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitFor(t, set, "5 Ready", func(s *v1alpha1.VirtualMachineSet) bool { return s.Status.ReadyReplicas == 5 })
	all := nodesOf(t, ns, 5)
	if got := countNodes(all); got != "pve1=2 pve2=2 pve4=1" {
		t.Errorf("5 VMs: got %s, want pve1=2 pve2=2 pve4=1 (skew at most 1)", got)
	}
	for i, n := range first {
		if all[i] != n {
			t.Errorf("web-%d moved from %s to %s", i, n, all[i])
		}
	}
}

// nodesOf is where each of the set's VMs web-0..web-<n-1> is, in the
// simulator, checked against its nodeName.
func nodesOf(t *testing.T, ns string, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range n {
		vm := &v1alpha1.VirtualMachine{}
		if err := h.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web-" + strconv.Itoa(i)}, vm); err != nil {
			t.Fatal(err)
		}
		out[i] = guestNode(t, providertest.VMIDOf(t, vm))
		if vm.Spec.NodeName != out[i] {
			t.Errorf("%s: nodeName %q, guest on %s", vm.Name, vm.Spec.NodeName, out[i])
		}
	}
	return out
}

// countNodes renders how many VMs each node holds, "pve1=1 pve2=1".
func countNodes(nodes []string) string {
	count := map[string]int{}
	for _, n := range nodes {
		count[n]++
	}
	var parts []string
	for _, n := range allNodes {
		if count[n] > 0 {
			parts = append(parts, n+"="+strconv.Itoa(count[n]))
		}
	}
	return strings.Join(parts, " ")
}
