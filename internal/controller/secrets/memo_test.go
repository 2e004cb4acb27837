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
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// countingReader counts the reads that reach the API server; beforeReturn,
// if set, runs after each read and before it returns.
type countingReader struct {
	client.Reader
	gets         atomic.Int32
	beforeReturn func()
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, o ...client.GetOption) error {
	r.gets.Add(1)
	err := r.Reader.Get(ctx, key, obj, o...)
	if r.beforeReturn != nil {
		r.beforeReturn()
	}
	return err
}

// changeSecret writes a new value to the Secret and, when seen, tells the
// watch about it as its reflector would.
func changeSecret(ctx context.Context, t *testing.T, kube client.Client, w *Watch, nn types.NamespacedName, value string, seen bool) {
	t.Helper()
	s := &corev1.Secret{}
	if err := kube.Get(ctx, nn, s); err != nil {
		t.Fatal(err)
	}
	s.Data = map[string][]byte{"pw": []byte(value)}
	if err := kube.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	if seen {
		if err := w.Update(s); err != nil {
			t.Fatal(err)
		}
	}
}

// memoOfOneSecret is a Memo over an API server holding Secret nn at
// resourceVersion 1 with pw "one", and a Watch that has seen nothing yet.
func memoOfOneSecret(nn types.NamespacedName) (client.Client, *countingReader, *Watch, *Memo) {
	kube := fake.NewClientBuilder().WithObjects(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: nn.Name, ResourceVersion: "1"},
		Data:       map[string][]byte{"pw": []byte("one")},
	}).Build()
	api := &countingReader{Reader: kube}
	w := NewWatch(nil)
	return kube, api, w, NewMemo(w, api)
}

func TestMemoKey(t *testing.T) {
	nn := types.NamespacedName{Namespace: "ns", Name: "ci"}
	type read struct {
		want Key
		gets int32 // API server reads so far
	}
	cases := map[string]struct {
		reason string
		// change runs before the second read.
		change func(context.Context, *testing.T, client.Client, *Watch)
		reads  []read
	}{
		"Unchanged": {
			reason: "A Secret whose resourceVersion did not move is read from the API server once.",
			reads: []read{
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
			},
		},
		"Changed": {
			reason: "A new resourceVersion seen by the watch makes the Secret be read again, once.",
			change: func(ctx context.Context, t *testing.T, c client.Client, w *Watch) {
				changeSecret(ctx, t, c, w, nn, "two", true)
			},
			reads: []read{
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
				{Key{Value: []byte("two"), ResourceVersion: "2"}, 2},
				{Key{Value: []byte("two"), ResourceVersion: "2"}, 2},
			},
		},
		"NotSeenYet": {
			reason: "Until the watch delivers a change the remembered value is used; the watch's event then makes it read again.",
			change: func(ctx context.Context, t *testing.T, c client.Client, w *Watch) {
				changeSecret(ctx, t, c, w, nn, "two", false)
			},
			reads: []read{
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
			},
		},
		"UnrelatedSecretChanged": {
			reason: "A change of another Secret costs no read.",
			change: func(_ context.Context, t *testing.T, _ client.Client, w *Watch) {
				other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other", ResourceVersion: "9"}}
				if err := w.Update(other); err != nil {
					t.Fatal(err)
				}
			},
			reads: []read{
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			kube, api, w, m := memoOfOneSecret(nn)
			for i, r := range tc.reads {
				if i == 1 && tc.change != nil {
					tc.change(ctx, t, kube, w)
				}
				got, err := m.Key(ctx, nn, "pw")
				if err != nil {
					t.Fatalf("%s\nread %d: %v", tc.reason, i, err)
				}
				if diff := cmp.Diff(r.want, got); diff != "" {
					t.Errorf("%s\nread %d: -want, +got:\n%s", tc.reason, i, diff)
				}
				if n := api.gets.Load(); n != r.gets {
					t.Errorf("%s\nafter read %d: %d API server reads, want %d", tc.reason, i, n, r.gets)
				}
			}
		})
	}
}

// A change the watch reports while the Secret is being read may be newer
// than the read: the watch's version stands, so the next read goes to the
// API server again instead of keeping the older value for good.
func TestMemoChangeDuringRead(t *testing.T) {
	ctx := context.Background()
	nn := types.NamespacedName{Namespace: "ns", Name: "ci"}
	kube, api, w, m := memoOfOneSecret(nn)
	api.beforeReturn = func() {
		api.beforeReturn = nil
		changeSecret(ctx, t, kube, w, nn, "two", true)
	}
	if got, err := m.Key(ctx, nn, "pw"); err != nil || string(got.Value) != "one" {
		t.Fatalf("first read: %q, %v", got.Value, err)
	}
	got, err := m.Key(ctx, nn, "pw")
	if err != nil || string(got.Value) != "two" || api.gets.Load() != 2 {
		t.Fatalf("after a change seen during the first read: %q, %v, %d API reads; want \"two\" after 2 reads", got.Value, err, api.gets.Load())
	}
	if _, err := m.Key(ctx, nn, "pw"); err != nil || api.gets.Load() != 2 {
		t.Fatalf("third read: %v, %d API reads, want 2", err, api.gets.Load())
	}
}

// A deleted Secret is the API server's NotFound, and its value is forgotten,
// as is its version.
func TestMemoDeleted(t *testing.T) {
	ctx := context.Background()
	nn := types.NamespacedName{Namespace: "ns", Name: "ci"}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: nn.Name}, Data: map[string][]byte{"pw": []byte("one")}}
	kube := fake.NewClientBuilder().WithObjects(s).Build()
	w := NewWatch(nil)
	m := NewMemo(w, kube)
	if _, err := m.Key(ctx, nn, "pw"); err != nil {
		t.Fatal(err)
	}
	if err := kube.Delete(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := w.Delete(s); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Key(ctx, nn, "pw"); !kerrors.IsNotFound(err) {
		t.Fatalf("Key of a deleted Secret = %v, want NotFound", err)
	}
	if len(m.read) != 0 || len(w.followed) != 0 {
		t.Errorf("the memo still holds %d Secrets and the watch follows %d after the only one was deleted", len(m.read), len(w.followed))
	}
	if _, err := m.Key(ctx, nn, "other"); !kerrors.IsNotFound(err) {
		t.Fatalf("Key of a deleted Secret = %v, want NotFound", err)
	}
}
