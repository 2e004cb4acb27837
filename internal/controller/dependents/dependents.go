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

// Package dependents re-observes managed resources as soon as the client of
// the ProxmoxConnection they use is replaced (a rotated credential, a
// connection that became Ready), instead of waiting for their poll interval.
//
// Gate holds back the resources of a connection that has no client once
// they report it, so a connection that is down costs neither requests nor
// status writes per resource and backoff.
//
// A managed-resource controller calls Watch in its Setup:
//
//	b := ctrl.NewControllerManagedBy(mgr).Named(name).For(&v1alpha1.VirtualMachine{}, ...)
//	if err := dependents.Watch(mgr, b, &v1alpha1.VirtualMachineList{}, clients); err != nil {
//		return err
//	}
//	return b.Complete(r)
package dependents

import (
	"context"
	"strings"

	kmeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/gated"
)

// IndexConnection indexes managed resources by the name of the
// ProxmoxConnection they resolve to (the one they report using, else
// providerConfigRef, else connectionRef, else "default", as resolved by
// GetProviderConfigReference).
const IndexConnection = "spec.providerConfigRef.resolvedName"

const (
	errListType = "cannot determine the managed resource kind of the list"
	errIndex    = "cannot index managed resources by their ProxmoxConnection"
)

// A typedReferencer resolves the ProxmoxConnection a managed resource uses.
type typedReferencer interface {
	GetProviderConfigReference() *xpv2.ProviderConfigReference
}

// A connectionUser reports the ProxmoxConnection it last went through when
// that may differ from its own reference (a snapshot uses its guest's), or
// "" before it knows.
type connectionUser interface {
	UsedConnection() string
}

// ConnectionOf returns the name of the ProxmoxConnection o uses, or "" when
// o references no ProxmoxConnection.
func ConnectionOf(o client.Object) string {
	if u, ok := o.(connectionUser); ok && u.UsedConnection() != "" {
		return u.UsedConnection()
	}
	r, ok := o.(typedReferencer)
	if !ok {
		return ""
	}
	ref := r.GetProviderConfigReference()
	if ref == nil || (ref.Kind != "" && ref.Kind != v1alpha1.ProxmoxConnectionKind) {
		return ""
	}
	return ref.Name
}

// Watch indexes the managed resources of list's kind by connection, and adds
// a source to b that enqueues every one of them using a connection whose
// client clients replaced. Call it once per managed-resource kind: a second
// index of the same kind fails. Each call takes its own subscription, since
// a channel feeds only one source.
func Watch(mgr ctrl.Manager, b *builder.Builder, list client.ObjectList, clients *pve.Cache) error {
	obj, err := itemOf(list, mgr.GetScheme())
	if err != nil {
		return errors.Wrap(err, errListType)
	}
	if err := gated.IndexField(mgr, obj, IndexConnection, indexValue); err != nil {
		return errors.Wrap(err, errIndex)
	}
	b.WatchesRawSource(source.Channel(clients.Subscribe(), handler.EnqueueRequestsFromMapFunc(Enqueuer(mgr.GetClient(), list))))
	return nil
}

func indexValue(o client.Object) []string {
	if name := ConnectionOf(o); name != "" {
		return []string{name}
	}
	return nil
}

// Enqueuer returns a map function from a ProxmoxConnection (only its name
// matters) to requests for every managed resource of list's kind using it.
// The list must be indexed by IndexConnection.
func Enqueuer(kube client.Reader, list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, connection client.Object) []reconcile.Request {
		l, ok := list.DeepCopyObject().(client.ObjectList)
		if !ok {
			return nil
		}
		if err := kube.List(ctx, l, client.MatchingFields{IndexConnection: connection.GetName()}); err != nil {
			// Each dependent still re-observes on its poll interval.
			return nil
		}
		var reqs []reconcile.Request
		_ = kmeta.EachListItem(l, func(item runtime.Object) error {
			if o, ok := item.(client.Object); ok {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}})
			}
			return nil
		})
		return reqs
	}
}

// itemOf returns an empty object of the kind list holds.
func itemOf(list client.ObjectList, s *runtime.Scheme) (client.Object, error) {
	gvk, err := apiutil.GVKForObject(list, s)
	if err != nil {
		return nil, err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	o, err := s.New(gvk)
	if err != nil {
		return nil, err
	}
	obj, ok := o.(client.Object)
	if !ok {
		return nil, errors.Errorf("%s is not a Kubernetes object", gvk)
	}
	return obj, nil
}
