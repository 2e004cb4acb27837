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
