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

package placement

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// View is what decisions are made from: the nodes and, for a clone, where
// the template can go. One View serves every decision of a reconcile.
type View struct {
	req Request
}

// Read reads the nodes (one listing per connection, kept a few seconds)
// and, for a clone (non-nil), the template's reach.
func Read(ctx context.Context, r Reader, clone *Clone) (View, error) {
	nodes, err := r.ClusterNodes(ctx)
	if err != nil {
		return View{}, errors.Wrap(err, "cannot read the nodes for placement")
	}
	v := View{req: Request{Nodes: nodes}}
	if clone != nil {
		if v.req.Reachable, err = Reachability(ctx, r, *clone); err != nil {
			return View{}, err
		}
	}
	return v, nil
}

// Choose decides among allowed; count, when non-nil, spreads.
func (v View) Choose(allowed []string, count map[string]int) (Decision, error) {
	req := v.req
	req.Allowed, req.Count = allowed, count
	return Choose(req)
}

// ForGuest is the node of a guest created with spec.placement and no
// nodeName: the decision recorded before when there is one (a placement is
// made once, so a retried create lands where the first attempt was
// headed), else a new one from what PVE reports now.
func ForGuest(ctx context.Context, r Reader, spec v1alpha1.GuestPlacementSpec, clone *Clone, recorded *v1alpha1.PlacementDecision) (v1alpha1.PlacementDecision, error) {
	if recorded != nil && recorded.Node != "" {
		return *recorded, nil
	}
	v, err := Read(ctx, r, clone)
	if err != nil {
		return v1alpha1.PlacementDecision{}, err
	}
	d, err := v.Choose(spec.AllowedNodes, nil)
	if err != nil {
		return v1alpha1.PlacementDecision{}, errors.Wrap(err, "spec.placement.allowedNodes")
	}
	return v1alpha1.PlacementDecision{Node: d.Node, Reason: d.Reason}, nil
}

// ReasonPlaced is the event of a placement decided.
const ReasonPlaced event.Reason = "Placed"

// Guest is a guest being created with spec.placement.
type Guest struct {
	Reader Reader
	Record event.Recorder
	Object resource.Managed
	Spec   *v1alpha1.GuestPlacementSpec
	// NodeName is the spec's nodeName, which rules when set.
	NodeName string
	// Clone is the template, or nil when nothing is cloned.
	Clone *Clone
	// Status is where the decision is kept (status.placement).
	Status **v1alpha1.PlacementDecision
}

// Node is the node to create the guest on: nodeName when set, else the
// placement's node, decided now (recorded in status, with an event) or
// earlier.
func (g Guest) Node(ctx context.Context) (string, error) {
	if g.NodeName != "" || g.Spec == nil {
		return g.NodeName, nil
	}
	d, err := ForGuest(ctx, g.Reader, *g.Spec, g.Clone, *g.Status)
	if err != nil {
		return "", err
	}
	if *g.Status == nil || **g.Status != d {
		g.Record.Event(g.Object, event.Normal(ReasonPlaced, "placed on node "+d.Node+": "+d.Reason))
		*g.Status = &d
	}
	return d.Node, nil
}

// Intended is the node a guest was asked to be created on: nodeName, else
// the placement's recorded node. It is where the guest is looked for first
// while /cluster/resources does not list it yet.
func Intended(nodeName string, d *v1alpha1.PlacementDecision) string {
	if nodeName == "" && d != nil {
		return d.Node
	}
	return nodeName
}
