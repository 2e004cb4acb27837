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

package secrets

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Watch follows the metadata of every Secret in the cluster with one watch
// and keeps almost nothing of it: the resourceVersions of the Secrets a Memo
// follows (so the Memo knows without a request whether a value it remembers
// is current), nothing at all for the others. It passes every change on to
// the controllers' sources as a name, and each maps the name to the
// resources that read that Secret.
//
// An informer keeps every Secret it sees (names, labels, owners, indexes):
// about 1.4 KB of the provider's memory per Secret in the cluster, most of
// them Secrets no resource names. This keeps memory flat in the number of
// Secrets, and keeps Secret values and annotations out of memory for good.
//
// Watch is the store its reflector writes to. Safe for concurrent use.
type Watch struct {
	lw toolscache.ListerWatcher

	mu          sync.Mutex
	followed    map[types.NamespacedName]followed
	changes     uint64 // counts changes to followed Secrets
	subscribers []func(types.NamespacedName)
}

// followed is what the watch knows of a followed Secret.
type followed struct {
	resourceVersion string // "" while unknown: not seen since followed, or deleted
	changedAt       uint64 // the value of changes at its last change
}

// NewWatch returns a Watch listing and watching Secrets through lw; Start
// runs it.
func NewWatch(lw toolscache.ListerWatcher) *Watch {
	return &Watch{lw: lw, followed: map[types.NamespacedName]followed{}}
}

// MetadataListWatch lists and watches the metadata of every Secret in the
// cluster: the API server never sends a value.
func MetadataListWatch(cfg *rest.Config) (toolscache.ListerWatcher, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, errors.Wrap(err, "cannot create a metadata client for the Secret watch")
	}
	secrets := mc.Resource(corev1.SchemeGroupVersion.WithResource("secrets"))
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return secrets.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return secrets.Watch(ctx, o)
		},
	}, nil
}

// Start runs the watch until ctx is done (manager.Runnable).
func (w *Watch) Start(ctx context.Context) error {
	r := toolscache.NewReflectorWithOptions(w.lw, &metav1.PartialObjectMetadata{}, w, toolscache.ReflectorOptions{Name: "secret-metadata"})
	r.RunWithContext(ctx)
	return nil
}

// NeedLeaderElection is false: a standby replica keeps its view current, so
// it reads no Secret it need not once it leads.
func (w *Watch) NeedLeaderElection() bool { return false }

// Source is a controller source that enqueues what toRequests maps a changed
// Secret to. The object it is given carries the Secret's namespace and name
// only. Changes before the controller starts are not replayed: a starting
// controller reconciles all its resources anyway.
func (w *Watch) Source(toRequests handler.MapFunc) source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.subscribers = append(w.subscribers, func(nn types.NamespacedName) {
			if ctx.Err() != nil {
				return
			}
			for _, r := range toRequests(ctx, secretNamed(nn)) {
				q.Add(r)
			}
		})
		return nil
	})
}

// Version is the resourceVersion of Secret nn as the watch last saw it; ok
// is false unless nn is followed and its version known.
func (w *Watch) Version(nn types.NamespacedName) (resourceVersion string, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.followed[nn]
	return f.resourceVersion, f.resourceVersion != ""
}

// Follow makes the watch keep Secret nn's resourceVersion from now on. Read
// the Secret after Follow and report its version with Learned, passing the
// mark Follow returned.
func (w *Watch) Follow(nn types.NamespacedName) (mark uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.followed[nn]; !ok {
		w.followed[nn] = followed{}
	}
	return w.changes
}

// Learned records resourceVersion, read from the API server after Follow
// returned mark, as nn's version, unless the watch saw nn change since: the
// read may then be older than what the watch saw, and the watch's version
// stands (at worst the Secret is read once more).
func (w *Watch) Learned(nn types.NamespacedName, resourceVersion string, mark uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f, ok := w.followed[nn]
	if !ok || f.changedAt > mark {
		return
	}
	f.resourceVersion = resourceVersion
	w.followed[nn] = f
}

// Unfollow stops keeping nn's version (it no longer exists, or nobody reads
// it).
func (w *Watch) Unfollow(nn types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.followed, nn)
}

// Add, Update, Delete, Replace and Resync make Watch the reflector's store
// (toolscache.ReflectorStore).

// Add records a new Secret.
func (w *Watch) Add(obj any) error { return w.changed(obj, false) }

// Update records a changed Secret.
func (w *Watch) Update(obj any) error { return w.changed(obj, false) }

// Delete records a deleted Secret.
func (w *Watch) Delete(obj any) error { return w.changed(obj, true) }

// Resync has nothing to do: nothing is stored to replay.
func (w *Watch) Resync() error { return nil }

// Replace is a full list (at start, and when the watch had to list again):
// every listed Secret counts as changed, and a followed Secret missing from
// the list as deleted.
func (w *Watch) Replace(list []any, _ string) error {
	gone := w.followedNames()
	for _, obj := range list {
		nn, rv, err := nameAndVersion(obj)
		if err != nil {
			return err
		}
		delete(gone, nn)
		w.record(nn, rv)
	}
	for nn := range gone {
		w.record(nn, "")
	}
	return nil
}

// followedNames is a copy of the names of the followed Secrets: few, unlike
// the Secrets a list returns.
func (w *Watch) followedNames() map[types.NamespacedName]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make(map[types.NamespacedName]bool, len(w.followed))
	for nn := range w.followed {
		names[nn] = true
	}
	return names
}

// Transformer trims what the reflector keeps while it streams the initial
// list to namespace, name and resourceVersion (toolscache.TransformingStore).
func (w *Watch) Transformer() toolscache.TransformFunc {
	return func(obj any) (any, error) {
		nn, rv, err := nameAndVersion(obj)
		if err != nil {
			return nil, err
		}
		s := secretNamed(nn)
		s.ResourceVersion = rv
		return s, nil
	}
}

func (w *Watch) changed(obj any, deleted bool) error {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	nn, rv, err := nameAndVersion(obj)
	if err != nil {
		return err
	}
	if deleted {
		rv = ""
	}
	w.record(nn, rv)
	return nil
}

// record keeps rv if nn is followed and tells every subscriber.
func (w *Watch) record(nn types.NamespacedName, rv string) {
	w.mu.Lock()
	if f, ok := w.followed[nn]; ok {
		w.changes++
		f.resourceVersion, f.changedAt = rv, w.changes
		w.followed[nn] = f
	}
	subscribers := w.subscribers
	w.mu.Unlock()
	for _, notify := range subscribers {
		notify(nn)
	}
}

func nameAndVersion(obj any) (types.NamespacedName, string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return types.NamespacedName{}, "", errors.Wrap(err, "the Secret watch got an object without metadata")
	}
	return types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}, m.GetResourceVersion(), nil
}

// secretNamed is the object a source hands its map function: a Secret's
// namespace and name, nothing else.
func secretNamed(nn types.NamespacedName) *metav1.PartialObjectMetadata {
	s := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: nn.Name}}
	s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return s
}
