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

package virtualmachineset

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/placement"
)

// nodesOnly answers a placement's reads: nodes, and a template on shared
// storage on pve1.
type nodesOnly []pve.NodeUsage

func (n nodesOnly) ClusterNodes(context.Context) ([]pve.NodeUsage, error) { return n, nil }
func (n nodesOnly) ClusterStorages(context.Context) ([]pve.StorageShare, error) {
	return []pve.StorageShare{{Storage: "ceph", Node: "pve1", Shared: true}}, nil
}
func (n nodesOnly) CachedClusterResources(context.Context, time.Duration) ([]pve.Resource, error) {
	return []pve.Resource{{VMID: 9000, Type: "qemu", Node: "pve1", Name: "tpl", Template: true}}, nil
}
func (n nodesOnly) GuestPending(context.Context, pve.GuestRef) (pve.GuestConfig, error) {
	return pve.GuestConfig{"scsi0": {Value: "ceph:base-9000-disk-0", HasValue: true}}, nil
}

const gib = int64(1) << 30

var cluster = nodesOnly{
	{Node: "pve1", Status: "online", MaxMem: 64 * gib, Mem: 10 * gib},
	{Node: "pve2", Status: "online", MaxMem: 64 * gib, Mem: 30 * gib},
	{Node: "pve3", Status: "offline", MaxMem: 64 * gib},
	{Node: "pve4", Status: "online", MaxMem: 32 * gib, Mem: 4 * gib},
}

func spreadSet(replicas int32, spread v1alpha1.PlacementSpread) *v1alpha1.VirtualMachineSet {
	return &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: v1alpha1.VirtualMachineSetSpec{
		Replicas:  replicas,
		Placement: &v1alpha1.SetPlacementSpec{AllowedNodes: []string{"pve1", "pve2", "pve3", "pve4"}, Spread: spread},
		Template:  v1alpha1.VirtualMachineCloneSpec{Name: "tpl"},
	}}
}

func vmOn(node string, seen bool) *v1alpha1.VirtualMachine {
	vm := &v1alpha1.VirtualMachine{Spec: v1alpha1.VirtualMachineSpec{NodeName: node}}
	if seen {
		vm.Status.Status.Node = node
	}
	return vm
}

func TestPlacerNodes(t *testing.T) {
	cases := map[string]struct {
		reason string
		set    *v1alpha1.VirtualMachineSet
		owned  map[int]*v1alpha1.VirtualMachine
		picks  int
		want   []string
	}{
		"SpreadFromEmpty": {
			reason: "A new set of 4 over 3 online nodes: the offline one is skipped, one node gets 2, by free memory.",
			set:    spreadSet(4, v1alpha1.PlacementSpreadNodes), picks: 4,
			want: []string{"pve1", "pve2", "pve4", "pve1"},
		},
		"ScaleUpCountsOwnVMs": {
			reason: "A scale-up counts the set's VMs where they run (or their nodeName before they are seen), not VMs beyond replicas.",
			set:    spreadSet(4, v1alpha1.PlacementSpreadNodes), picks: 2,
			owned: map[int]*v1alpha1.VirtualMachine{0: vmOn("pve1", true), 1: vmOn("pve4", false), 7: vmOn("pve2", true)},
			want:  []string{"pve2", "pve1"},
		},
		"FromScratch": {
			reason: "VMs created from scratch (a template without name) are placed without a template to reach.",
			set: func() *v1alpha1.VirtualMachineSet {
				s := spreadSet(2, v1alpha1.PlacementSpreadNodes)
				s.Spec.Template.Name = ""
				return s
			}(), picks: 2,
			want: []string{"pve1", "pve2"},
		},
		"NoSpread": {
			reason: "Without a spread every VM goes to the node with the most free memory.",
			set:    spreadSet(2, ""), picks: 2,
			want: []string{"pve1", "pve1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := newPlacer(tc.set, tc.owned, func(context.Context) (placement.Reader, error) { return cluster, nil })
			var got []string
			for range tc.picks {
				node, _, found, err := p.node(context.Background())
				if err != nil || !found {
					t.Fatalf("node(): %q %v %v", node, found, err)
				}
				got = append(got, node)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			c, ok := p.condition()
			if !ok || c.Status != corev1.ConditionTrue || c.Message != "the last VMs placed skipped pve3: status offline" {
				t.Errorf("NodesSkipped names the offline node: %v %+v", ok, c)
			}
		})
	}
}

// A set whose allowed nodes are all offline creates nothing and says why
// in NodesSkipped.
func TestPlacerNoEligibleNode(t *testing.T) {
	set := spreadSet(1, v1alpha1.PlacementSpreadNodes)
	set.Spec.Placement.AllowedNodes = []string{"pve3"}
	p := newPlacer(set, nil, func(context.Context) (placement.Reader, error) { return cluster, nil })
	if node, _, found, err := p.node(context.Background()); err != nil || found || node != "" {
		t.Fatalf("node(): %q %v %v", node, found, err)
	}
	c, _ := p.condition()
	want := "a VM cannot be created: spec.placement.allowedNodes: no allowed node can take the guest: pve3: status offline"
	if diff := cmp.Diff(want, c.Message); diff != "" || c.Reason != "NoEligibleNode" {
		t.Errorf("NodesSkipped (reason %s): -want, +got:\n%s", c.Reason, diff)
	}
}
