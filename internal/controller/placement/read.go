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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
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

// Check says why the guest cannot be created on node (what it needs is
// missing there), "" when it can; an error when it cannot tell.
type Check func(ctx context.Context, node string) (string, error)

// ChooseChecked is Choose, where the best node must also pass check (nil
// passes every node): a node that fails is skipped with check's reason and
// the next best tried. Only the nodes tried are checked.
func (v View) ChooseChecked(ctx context.Context, allowed []string, count map[string]int, check Check) (Decision, error) {
	req := v.req
	req.Allowed, req.Count, req.Excluded = allowed, count, map[string]string{}
	for {
		d, err := Choose(req)
		if err != nil || check == nil {
			return d, err
		}
		why, err := check(ctx, d.Node)
		if err != nil {
			return Decision{}, err
		}
		if why == "" {
			return d, nil
		}
		req.Excluded[d.Node] = why
	}
}

// ForGuest is the node of a guest created with spec.placement and no
// nodeName: the decision recorded before when there is one (a placement is
// made once, so a retried create lands where the first attempt was
// headed), else a new one from what PVE reports now.
func ForGuest(ctx context.Context, r Reader, spec v1alpha1.GuestPlacementSpec, clone *Clone, check Check, recorded *v1alpha1.PlacementDecision) (v1alpha1.PlacementDecision, error) {
	if recorded != nil && recorded.Node != "" {
		return *recorded, nil
	}
	v, err := Read(ctx, r, clone)
	if err != nil {
		return v1alpha1.PlacementDecision{}, err
	}
	d, err := v.ChooseChecked(ctx, spec.AllowedNodes, nil, check)
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
	// Check, when set, skips a node lacking what the guest needs.
	Check Check
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
	recorded := Recorded(g.Object)
	d, err := ForGuest(ctx, g.Reader, *g.Spec, g.Clone, g.Check, recorded)
	if err != nil {
		return "", err
	}
	if recorded == nil {
		g.Record.Event(g.Object, event.Normal(ReasonPlaced, "placed on node "+d.Node+": "+d.Reason))
		meta.AddAnnotations(g.Object, map[string]string{AnnotationNode: d.Node, AnnotationReason: d.Reason})
	}
	*g.Status = &d
	return d.Node, nil
}

// The decision is kept in annotations: Crossplane persists a resource's
// annotations after Create (as it does the VMID in the external name) but
// not what Create wrote to its status. Follow copies it to status.
const (
	AnnotationNode   = "proxmox.alperen.cloud/placed-node"
	AnnotationReason = "proxmox.alperen.cloud/placed-reason"
)

// Recorded is the decision kept on obj, or nil.
func Recorded(obj metav1.Object) *v1alpha1.PlacementDecision {
	a := obj.GetAnnotations()
	if a[AnnotationNode] == "" {
		return nil
	}
	return &v1alpha1.PlacementDecision{Node: a[AnnotationNode], Reason: a[AnnotationReason]}
}

// Follow shows the decision kept on obj in status.
func Follow(obj metav1.Object, status **v1alpha1.PlacementDecision) {
	if r := Recorded(obj); r != nil && (*status == nil || **status != *r) {
		*status = r
	}
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
