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
	"sort"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// mrdGVK is Crossplane's ManagedResourceDefinition; its presence says the
// cluster runs Crossplane v2.
var mrdGVK = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Kind: "ManagedResourceDefinition"}

// Source is one kubemox object.
type Source struct {
	Kind Kind
	Obj  *unstructured.Unstructured
}

// Ref is how plan output and errors name an object.
func (s Source) Ref() string {
	if ns := s.Obj.GetNamespace(); ns != "" {
		return s.Kind.Name + " " + ns + "/" + s.Obj.GetName()
	}
	return s.Kind.Name + " " + s.Obj.GetName()
}

// Inventory is what the cluster holds of kubemox and of provider-proxmox.
type Inventory struct {
	// CRDs are kubemox's CRDs still installed.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Objects are every object of those CRDs.
	Objects []Source
	// Missing are kubemox kinds whose CRD is not installed.
	Missing []string
	// Ours are provider-proxmox CRDs already installed.
	Ours []string
	// Crossplane says whether ManagedResourceDefinitions are served;
	// OurMRDs are those of our group.
	Crossplane bool
	OurMRDs    []string
}

// Discover reads every kubemox object, tolerating kinds that are not
// installed, and what is already installed of ours.
func Discover(ctx context.Context, kube client.Client) (*Inventory, error) {
	inv := &Inventory{}
	for _, k := range Kinds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		err := kube.Get(ctx, client.ObjectKey{Name: k.CRDName()}, crd)
		if client.IgnoreNotFound(err) != nil {
			return nil, errors.Wrapf(err, "cannot read CRD %s", k.CRDName())
		}
		switch {
		case err != nil:
			inv.Missing = append(inv.Missing, k.Name)
		case IsOurCRD(crd):
			inv.Ours = append(inv.Ours, crd.Name)
		default:
			objs, err := listObjects(ctx, kube, k, crd)
			if err != nil {
				return nil, err
			}
			inv.CRDs = append(inv.CRDs, crd)
			inv.Objects = append(inv.Objects, objs...)
		}
	}
	return inv, discoverMRDs(ctx, kube, inv)
}

// listObjects lists a kubemox kind in the version its CRD serves.
func listObjects(ctx context.Context, kube client.Client, k Kind, crd *apiextensionsv1.CustomResourceDefinition) ([]Source, error) {
	version, ok := servedVersion(crd)
	if !ok {
		return nil, errors.Errorf("CRD %s serves no version", crd.Name)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: Group, Version: version, Kind: k.Name + "List"})
	if err := kube.List(ctx, list); err != nil {
		return nil, errors.Wrapf(err, "cannot list kubemox %s objects", k.Name)
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := list.Items[i], list.Items[j]
		return a.GetNamespace()+"/"+a.GetName() < b.GetNamespace()+"/"+b.GetName()
	})
	out := make([]Source, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, Source{Kind: k, Obj: &list.Items[i]})
	}
	return out, nil
}

// discoverMRDs records whether Crossplane v2 runs and which of our
// ManagedResourceDefinitions its package manager made.
func discoverMRDs(ctx context.Context, kube client.Client, inv *Inventory) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(mrdGVK.GroupVersion().WithKind(mrdGVK.Kind + "List"))
	err := kube.List(ctx, list)
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return errors.Wrap(err, "cannot list ManagedResourceDefinitions")
	}
	inv.Crossplane = true
	for _, m := range list.Items {
		if g, _, _ := unstructured.NestedString(m.Object, keySpec, "group"); g == Group {
			inv.OurMRDs = append(inv.OurMRDs, m.GetName())
		}
	}
	return nil
}

// objectsOf are the inventory's objects of one kind.
func (inv *Inventory) objectsOf(kind string) []Source {
	var out []Source
	for _, s := range inv.Objects {
		if s.Kind.Name == kind {
			out = append(out, s)
		}
	}
	return out
}
