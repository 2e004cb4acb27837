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

package dependents

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// Gate wraps a managed-resource reconciler so that the connection's health
// gates its dependents. A resource whose connection has no client, and whose
// Synced condition already reports exactly that, is not reconciled again
// until the poll interval has passed or the connection's client changes
// (Watch enqueues it then): without the gate every resource of a connection
// that is down fails again at each error backoff, writing its status each
// time, however long the connection stays down.
//
// The first reconcile after the connection failed still runs, and writes
// the connection's failure into the resource's condition; so does one
// whose connection failed for a new reason.
func Gate(inner reconcile.Reconciler, kube client.Reader, clients *pve.Cache, newManaged func() resource.Managed, wait time.Duration) reconcile.Reconciler {
	return &gate{inner: inner, kube: kube, clients: clients, newManaged: newManaged, wait: wait}
}

type gate struct {
	inner      reconcile.Reconciler
	kube       client.Reader
	clients    *pve.Cache
	newManaged func() resource.Managed
	wait       time.Duration
}

func (g *gate) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if g.waitsForConnection(ctx, req) {
		return reconcile.Result{RequeueAfter: g.wait}, nil
	}
	return g.inner.Reconcile(ctx, req)
}

// waitsForConnection reports whether the resource already says that its
// connection has no client for the reason the cache gives now. Any doubt
// (not in the cache, being deleted, another condition) lets it through.
func (g *gate) waitsForConnection(ctx context.Context, req reconcile.Request) bool {
	mg := g.newManaged()
	if err := g.kube.Get(ctx, req.NamespacedName, mg); err != nil || meta.WasDeleted(mg) {
		return false
	}
	name := ConnectionOf(mg)
	if name == "" {
		return false
	}
	_, err := g.clients.Get(name)
	if err == nil {
		return false
	}
	synced := mg.GetCondition(xpv2.TypeSynced)
	return synced.Status == corev1.ConditionFalse && synced.ObservedGeneration == mg.GetGeneration() &&
		strings.Contains(synced.Message, err.Error())
}
