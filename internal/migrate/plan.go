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

package migrate

import (
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotations the export writes.
const (
	// AnnotationSource names the kubemox object a manifest replaces
	// (Kind/namespace/name), so apply can tell that every kubemox object
	// has its replacement before it deletes kubemox's CRDs.
	AnnotationSource = "kubemox-migrate.proxmox.alperen.cloud/source"
	// annotationExternalName is Crossplane's.
	annotationExternalName = "crossplane.io/external-name"
	// annotationLastApplied is kubectl's copy of the old manifest, which
	// may carry the inline credentials moved out.
	annotationLastApplied = "kubectl.kubernetes.io/last-applied-configuration"
)

// Item is what happens to one kubemox object.
type Item struct {
	Source Source
	// Manifest is our object replacing it; Secrets the inline credentials
	// it now reads from.
	Manifest *unstructured.Unstructured
	Secrets  []*corev1.Secret
	// Action says in a line what the manifest does.
	Action string
	// Problems need a human; an item with any is not exported.
	Problems []string
}

// Plan is every kubemox object's item, and what stops the migration as a
// whole.
type Plan struct {
	Items    []*Item
	Problems []string
	Missing  []string
}

// Clean says whether nothing needs a human.
func (p *Plan) Clean() bool {
	if len(p.Problems) > 0 {
		return false
	}
	for _, it := range p.Items {
		if len(it.Problems) > 0 {
			return false
		}
	}
	return true
}

// Options shape the plan.
type Options struct {
	Mapping *Mapping
	// SecretNamespace holds the Secrets of the cluster-scoped
	// ProxmoxConnections' inline credentials.
	SecretNamespace string
	// KeepInline leaves inline credentials where they are.
	KeepInline bool
}

// planner builds a plan from an inventory and the connections' views.
type planner struct {
	inv   *Inventory
	conns map[string]*Connection
	opts  Options
	// vms are the kubemox VirtualMachines' items by name, for snapshots and
	// sets.
	vms map[string]*Item
	// vmids are the VMIDs and nodes resolved for VirtualMachines by name.
	vmids map[string]guestAt
}

// guestAt is a resolved guest.
type guestAt struct {
	vmid int
	node string
}

// BuildPlan reads the cluster (only reads, in Kubernetes and Proxmox VE)
// and decides each object's fate.
func BuildPlan(ctx context.Context, kube client.Client, opts Options) (*Plan, error) {
	inv, err := Discover(ctx, kube)
	if err != nil {
		return nil, err
	}
	p := &planner{inv: inv, conns: Connect(ctx, kube, inv), opts: opts, vms: map[string]*Item{}, vmids: map[string]guestAt{}}
	return p.build(ctx), nil
}

func (p *planner) build(ctx context.Context) *Plan {
	plan := &Plan{Missing: p.inv.Missing}
	if len(p.inv.OurMRDs) > 0 && len(p.inv.CRDs) > 0 {
		plan.Problems = append(plan.Problems, fmt.Sprintf(
			"provider-proxmox's package is already installed (ManagedResourceDefinitions %s) while kubemox's CRDs remain: "+
				"its always-active kinds collide with kubemox's; delete the Provider, run apply, then install it",
			strings.Join(p.inv.OurMRDs, ", ")))
	}
	for _, s := range p.inv.Objects {
		it := p.item(ctx, s)
		plan.Items = append(plan.Items, it)
		if s.Kind.Name == kindVM {
			p.vms[s.Obj.GetName()] = it
		}
	}
	return plan
}

// item converts one object; the per-kind steps add problems rather than
// fail, so the plan lists everything that needs a human at once.
func (p *planner) item(ctx context.Context, s Source) *Item {
	it := &Item{Source: s, Manifest: baseManifest(s)}
	if foreign := foreignOwners(s.Obj); len(foreign) > 0 {
		it.Problems = append(it.Problems, "is owned by "+strings.Join(foreign, ", ")+", which this tool does not migrate")
	}
	p.place(it)
	switch s.Kind.Name {
	case "ProxmoxConnection":
		p.connection(it)
	case kindVM, "Container", kindTemplate:
		p.guest(it)
	case "VirtualMachineSet":
		p.set(it)
	case "CustomCertificate":
		p.certificate(ctx, it)
	case "StorageDownloadURL":
		p.download(ctx, it)
	case "VirtualMachineSnapshot":
		p.snapshot(ctx, it)
	case "VirtualMachineSnapshotPolicy":
		_ = unstructured.SetNestedField(it.Manifest.Object, true, keySpec, "suspend")
		it.Action = "suspended (spec.suspend: true): resume it once the migration is done"
	}
	if it.Action == "" {
		it.Action = "cannot be migrated as it is"
	}
	if s.Kind.Managed {
		_ = unstructured.SetNestedStringSlice(it.Manifest.Object, []string{"Observe"}, keySpec, "managementPolicies")
	}
	return it
}

// place sets the target namespace: cluster-scoped kubemox objects by the
// mapping (a set's VMs with their set), namespaced ones where they are.
func (p *planner) place(it *Item) {
	s := it.Source
	if !s.Kind.ClusterScoped || s.Kind.Name == "ProxmoxConnection" {
		return
	}
	kind, labelsOf := s.Kind.Name, s.Obj.GetLabels()
	if set, ok := controllingSet(s.Obj); ok {
		for _, o := range p.inv.objectsOf("VirtualMachineSet") {
			if o.Obj.GetName() == set {
				kind, labelsOf = "VirtualMachineSet", o.Obj.GetLabels()
			}
		}
	}
	ns, err := p.opts.Mapping.NamespaceFor(kind, labelsOf)
	if err != nil {
		it.Problems = append(it.Problems, err.Error())
		return
	}
	it.Manifest.SetNamespace(ns)
}

// foreignOwners are obj's owners that are not kubemox objects. Owners
// among kubemox's kinds (a set's VMs, a policy's snapshots) are dropped:
// UIDs do not survive the move, a set adopts its VMs by name, and a
// suspended policy prunes nothing.
func foreignOwners(obj *unstructured.Unstructured) []string {
	var out []string
	for _, o := range obj.GetOwnerReferences() {
		if _, ok := KindNamed(o.Kind); ok && strings.HasPrefix(o.APIVersion, Group+"/") {
			continue
		}
		out = append(out, o.Kind+" "+o.Name)
	}
	return out
}

// controllingSet is the name of the kubemox VirtualMachineSet owning obj.
func controllingSet(obj *unstructured.Unstructured) (string, bool) {
	for _, o := range obj.GetOwnerReferences() {
		if o.Kind == "VirtualMachineSet" {
			return o.Name, true
		}
	}
	return "", false
}

// baseManifest is our object for s: same group, kind and name, kubemox's
// spec (our fields follow kubemox's), labels and annotations, and the
// source annotation.
func baseManifest(s Source) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(Group + "/v1alpha1")
	u.SetKind(s.Kind.Name)
	u.SetName(s.Obj.GetName())
	u.SetNamespace(s.Obj.GetNamespace())
	if l := s.Obj.GetLabels(); len(l) > 0 {
		u.SetLabels(l)
	}
	ann := map[string]string{}
	for k, v := range s.Obj.GetAnnotations() {
		if k != annotationLastApplied {
			ann[k] = v
		}
	}
	ann[AnnotationSource] = s.Kind.Name + "/" + s.Obj.GetNamespace() + "/" + s.Obj.GetName()
	u.SetAnnotations(ann)
	if spec, ok, _ := unstructured.NestedMap(s.Obj.Object, keySpec); ok {
		u.Object[keySpec] = spec
	}
	return u
}

// Print writes the plan for a human: per object what happens, where it
// lands, the Secrets it gets, and what needs a human.
func (p *Plan) Print(w io.Writer) {
	for _, m := range p.Missing {
		fmt.Fprintf(w, "kind %s: not installed, nothing to migrate\n", m)
	}
	for _, it := range p.Items {
		fmt.Fprintf(w, "%s -> %s: %s\n", it.Source.Ref(), target(it.Manifest), it.Action)
		for _, s := range it.Secrets {
			keys := make([]string, 0, len(s.StringData))
			for k := range s.StringData {
				keys = append(keys, k)
			}
			fmt.Fprintf(w, "    + Secret %s/%s (keys %s)\n", s.Namespace, s.Name, strings.Join(sortedStrings(keys), ", "))
		}
		for _, pr := range it.Problems {
			fmt.Fprintf(w, "    ! NEEDS A HUMAN: %s\n", pr)
		}
	}
	for _, pr := range p.Problems {
		fmt.Fprintf(w, "! NEEDS A HUMAN: %s\n", pr)
	}
	if p.Clean() {
		fmt.Fprintf(w, "plan is clean: %d objects to migrate\n", len(p.Items))
		return
	}
	fmt.Fprintln(w, "plan is NOT clean: resolve the items marked NEEDS A HUMAN and run plan again")
}

// target names our object.
func target(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return u.GetKind() + " " + ns + "/" + u.GetName()
	}
	return u.GetKind() + " " + u.GetName()
}
