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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

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
//
// A connection that works but answers slowly (requests hanging until the
// per-attempt timeout hold its request slots) is gated too: at most
// turnsPerSlot reconciles per request slot of its client run at once. A
// reconcile beyond that is put back and woken (through Wakeups) as soon as a
// reconcile of its connection ends, first put back first woken. Without
// that, reconciles of the slow connection waiting for its slots would take
// every worker of the controller, and resources of every other connection
// would wait with them.
func Gate(inner reconcile.Reconciler, kube client.Reader, clients *pve.Cache, newManaged func() resource.Managed, wait time.Duration) *Gated {
	return &Gated{
		inner: inner, kube: kube, clients: clients, newManaged: newManaged, wait: wait,
		turns: newTurns(), wake: make(chan event.GenericEvent, wakeBuffer),
	}
}

const (
	// turnsPerSlot reconciles per request slot may run at once: more than
	// one, so that a slot freed finds a reconcile ready to use it while
	// others write status.
	turnsPerSlot = 2
	// turnWait is when a reconcile put back for a turn tries again if no
	// wakeup came first (the wakeup buffer was full).
	turnWait = 10 * time.Second
	// wakeBuffer holds wakeups until the controller's queue takes them.
	wakeBuffer = 1024
)

// Gated is the gated reconciler. Watch its Wakeups.
type Gated struct {
	inner      reconcile.Reconciler
	kube       client.Reader
	clients    *pve.Cache
	newManaged func() resource.Managed
	wait       time.Duration
	turns      *turns
	wake       chan event.GenericEvent
}

// Wakeups is the source of the requests put back for a turn, each sent when
// a turn of its connection frees.
func (g *Gated) Wakeups() source.Source {
	return source.Channel(g.wake, &handler.EnqueueRequestForObject{})
}

// Reconcile runs the inner reconciler unless the resource waits for its
// connection or for a turn.
func (g *Gated) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mg := g.newManaged()
	if err := g.kube.Get(ctx, req.NamespacedName, mg); err != nil {
		return g.inner.Reconcile(ctx, req) // not in the cache: the managed reconciler decides
	}
	name := ConnectionOf(mg)
	if name == "" {
		return g.inner.Reconcile(ctx, req)
	}
	cl, err := g.clients.Get(name)
	if err != nil {
		if waitsForConnection(mg, err) {
			return reconcile.Result{RequeueAfter: g.wait}, nil
		}
		return g.inner.Reconcile(ctx, req)
	}
	if !g.turns.take(name, turnsPerSlot*cl.Slots(), req.NamespacedName) {
		return reconcile.Result{RequeueAfter: turnWait}, nil
	}
	defer g.release(name)
	return g.inner.Reconcile(ctx, req)
}

// release ends a turn of connection and wakes the request that waited
// longest for one, if any.
func (g *Gated) release(connection string) {
	next, ok := g.turns.release(connection)
	if !ok {
		return
	}
	mg := g.newManaged()
	mg.SetNamespace(next.Namespace)
	mg.SetName(next.Name)
	select {
	case g.wake <- event.GenericEvent{Object: mg}:
	default: // full: the request tries again after turnWait
	}
}

// waitsForConnection reports whether the resource already says that its
// connection has no client for the reason err gives now. Any doubt (being
// deleted, another condition) lets it through.
func waitsForConnection(mg resource.Managed, err error) bool {
	if meta.WasDeleted(mg) {
		return false
	}
	synced := mg.GetCondition(xpv2.TypeSynced)
	return synced.Status == corev1.ConditionFalse && synced.ObservedGeneration == mg.GetGeneration() &&
		strings.Contains(synced.Message, err.Error())
}

// turns counts the reconciles running per connection, and the requests put
// back for a turn in the order they were.
type turns struct {
	mu      sync.Mutex
	running map[string]int
	waiting map[string][]types.NamespacedName
	// queued holds the requests in waiting; a request that got a turn since
	// it was put back is skipped when its entry comes up.
	queued map[types.NamespacedName]bool
}

func newTurns() *turns {
	return &turns{running: map[string]int{}, waiting: map[string][]types.NamespacedName{}, queued: map[types.NamespacedName]bool{}}
}

// take starts a reconcile of req on connection unless limit are running;
// then req waits for a turn (once, however often it is put back).
func (t *turns) take(connection string, limit int, req types.NamespacedName) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running[connection] >= limit {
		if !t.queued[req] {
			t.queued[req] = true
			t.waiting[connection] = append(t.waiting[connection], req)
		}
		return false
	}
	t.running[connection]++
	delete(t.queued, req)
	return true
}

// release ends a reconcile on connection and returns the request that has
// waited longest for a turn there, if any.
func (t *turns) release(connection string) (types.NamespacedName, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running[connection]--
	if t.running[connection] == 0 {
		delete(t.running, connection)
	}
	for q := t.waiting[connection]; len(q) > 0; q = t.waiting[connection] {
		next := q[0]
		t.waiting[connection] = q[1:]
		if t.queued[next] {
			delete(t.queued, next)
			return next, true
		}
	}
	delete(t.waiting, connection)
	return types.NamespacedName{}, false
}
