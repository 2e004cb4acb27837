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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func secretMeta(ns, name, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, ResourceVersion: rv,
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"pw":"hunter2"}}`},
	}}
}

// recordingSource starts w's source with a map function that records what
// it was given and maps every Secret to a request of the same name.
func recordingSource(t *testing.T, w *Watch) (workqueue.TypedRateLimitingInterface[reconcile.Request], *[]client.Object) {
	t.Helper()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	var seen []client.Object
	src := w.Source(func(_ context.Context, o client.Object) []reconcile.Request {
		seen = append(seen, o)
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}}}
	})
	if err := src.Start(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	return q, &seen
}

// Every change reaches the sources as a name only: no annotation (where
// kubectl keeps a Secret's whole data) reaches a map function.
func TestWatchSourceGetsNamesOnly(t *testing.T) {
	w := NewWatch(nil)
	q, seen := recordingSource(t, w)
	if err := w.Add(secretMeta("ns", "a", "1")); err != nil {
		t.Fatal(err)
	}
	if err := w.Update(secretMeta("ns", "a", "2")); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 1 {
		t.Errorf("queue holds %d requests, want 1 (two changes of one Secret)", q.Len())
	}
	if len(*seen) != 2 {
		t.Fatalf("map function called %d times, want 2", len(*seen))
	}
	want := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	want.SetGroupVersionKind(secretNamed(types.NamespacedName{}).GroupVersionKind())
	if diff := cmp.Diff(want, (*seen)[1]); diff != "" {
		t.Errorf("object given to the map function: -want, +got:\n%s", diff)
	}
}

// A full list keeps the versions of followed Secrets, forgets those missing
// from it (deleted while the watch was away) and tells the sources about
// every Secret it names or lost.
func TestWatchReplace(t *testing.T) {
	w := NewWatch(nil)
	kept := types.NamespacedName{Namespace: "ns", Name: "kept"}
	gone := types.NamespacedName{Namespace: "ns", Name: "gone"}
	for _, nn := range []types.NamespacedName{kept, gone} {
		w.Learned(nn, "1", w.Follow(nn))
	}
	q, _ := recordingSource(t, w)
	list := []any{secretMeta("ns", "kept", "5"), secretMeta("other", "unfollowed", "3")}
	if err := w.Replace(list, "10"); err != nil {
		t.Fatal(err)
	}
	if rv, ok := w.Version(kept); !ok || rv != "5" {
		t.Errorf("Version(kept) = %q, %t; want \"5\", true", rv, ok)
	}
	if rv, ok := w.Version(gone); ok {
		t.Errorf("Version(gone) = %q, true; want unknown after a list without it", rv)
	}
	if _, ok := w.Version(types.NamespacedName{Namespace: "other", Name: "unfollowed"}); ok {
		t.Errorf("the watch keeps the version of a Secret nobody follows")
	}
	if q.Len() != 3 {
		t.Errorf("queue holds %d requests, want 3 (kept, unfollowed, gone)", q.Len())
	}
}

// While the initial list streams in, the reflector keeps what the
// transformer returns: namespace, name and resourceVersion.
func TestWatchTransformer(t *testing.T) {
	got, err := NewWatch(nil).Transformer()(secretMeta("ns", "a", "7"))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := got.(*metav1.PartialObjectMetadata)
	if !ok || m.Annotations != nil || m.Name != "a" || m.Namespace != "ns" || m.ResourceVersion != "7" {
		t.Errorf("transformed: %#v", got)
	}
	if _, err := NewWatch(nil).Transformer()("not an object"); err == nil {
		t.Errorf("transforming a non-object succeeded")
	}
}
