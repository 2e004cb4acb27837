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

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/placement"
)

// TypeNodesSkipped is the condition saying the set's placement left out an
// allowed node (offline, say) for the VMs it last placed, or found none for
// a VM.
const TypeNodesSkipped xpv2.ConditionType = "NodesSkipped"

// placer decides the nodes of the set's new VMs. It reads Proxmox only when
// a VM is to be created, once per reconcile, and counts each VM it places
// so a scale-up by several VMs is spread too.
type placer struct {
	set     *v1alpha1.VirtualMachineSet
	client  func(ctx context.Context) (placement.Reader, error)
	view    *placement.View
	count   map[string]int
	decided bool
	skipped []placement.Skip
	// none is why a VM could not be placed (wraps
	// placement.ErrNoEligibleNode), nil otherwise.
	none error
}

// newPlacer counts the set's VMs per node: where each runs, or its nodeName
// until it has been seen. VMs beyond spec.replicas are on their way out.
func newPlacer(set *v1alpha1.VirtualMachineSet, owned map[int]*v1alpha1.VirtualMachine, client func(context.Context) (placement.Reader, error)) *placer {
	count := map[string]int{}
	for i, vm := range owned {
		if i >= int(set.Spec.Replicas) {
			continue
		}
		node := vm.Status.Status.Node
		if node == "" {
			node = vm.Spec.NodeName
		}
		if node != "" {
			count[node]++
		}
	}
	return &placer{set: set, client: client, count: count}
}

// node is the node of a new VM and why ("" when nodeName rules). A VM no
// allowed node can take gets no node and found false; the set's condition
// says why.
func (p *placer) node(ctx context.Context) (node, why string, found bool, err error) {
	pl := p.set.Spec.Placement
	if pl == nil {
		return p.set.Spec.NodeName, "", true, nil
	}
	if p.view == nil {
		cl, err := p.client(ctx)
		if err != nil {
			return "", "", false, err
		}
		v, err := placement.Read(ctx, cl, p.clone())
		if err != nil {
			return "", "", false, err
		}
		p.view = &v
	}
	var count map[string]int
	if pl.Spread == v1alpha1.PlacementSpreadNodes {
		count = p.count
	}
	d, err := p.view.Choose(pl.AllowedNodes, count)
	p.decided = true
	if errors.Is(err, placement.ErrNoEligibleNode) {
		p.none = err
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	p.count[d.Node]++
	p.skipped = d.Skipped
	return d.Node, d.Reason, true, nil
}

// clone is the template every VM of the set is cloned from; nil for VMs
// created from scratch (no template name) or from a templateRef, whose name
// each VM resolves itself (its node is then not checked for the template).
func (p *placer) clone() *placement.Clone {
	t := p.set.Spec.Template
	spec := v1alpha1.VirtualMachineSpec{Template: &t}
	storage := ""
	if len(t.Disk) > 0 {
		storage = t.Disk[0].Storage
	}
	return placement.CloneOf(pve.QEMU, t.Name, spec.IsFullClone(), storage)
}

// condition is the NodesSkipped condition after this reconcile's
// placements; false when none was made (the last one stands).
func (p *placer) condition() (xpv2.Condition, bool) {
	switch {
	case !p.decided:
		return xpv2.Condition{}, false
	case p.none != nil:
		return flag(TypeNodesSkipped, true, "NoEligibleNode", errors.Wrap(p.none, "a VM cannot be created: spec.placement.allowedNodes").Error()), true
	case len(p.skipped) > 0:
		return flag(TypeNodesSkipped, true, "NodesSkipped", "the last VMs placed skipped "+placement.SkipList(p.skipped)), true
	}
	return flag(TypeNodesSkipped, false, "", ""), true
}

// clientFor returns the set's connection's client, for a placement.
func (r *Reconciler) clientFor(set *v1alpha1.VirtualMachineSet) func(context.Context) (placement.Reader, error) {
	return func(ctx context.Context) (placement.Reader, error) {
		name := v1alpha1.DefaultConnectionName
		if ref := set.Spec.ConnectionRef; ref != nil && ref.Name != "" {
			name = ref.Name
		}
		cl, err := guest.ClientOf(ctx, guest.Readers{Kube: r.kube, Fresh: r.fresh}, r.clients, set, name)
		if err != nil {
			return nil, errors.Wrap(err, "cannot place the set's VMs")
		}
		return cl, nil
	}
}
