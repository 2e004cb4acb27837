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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	gets atomic.Int32
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, o ...client.GetOption) error {
	r.gets.Add(1)
	return r.Reader.Get(ctx, key, obj, o...)
}

// unsynced is a metadata cache that knows nothing yet.
type unsynced struct{ client.Reader }

func (unsynced) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return kerrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "")
}

func TestMemoKey(t *testing.T) {
	nn := types.NamespacedName{Namespace: "ns", Name: "ci"}
	type read struct {
		want Key
		gets int32 // API server reads so far
	}
	cases := map[string]struct {
		reason   string
		metadata func(client.Client) client.Reader
		change   func(context.Context, client.Client) error
		reads    []read
	}{
		"Unchanged": {
			reason:   "A Secret whose resourceVersion did not move is read from the API server once.",
			metadata: func(c client.Client) client.Reader { return c },
			reads: []read{
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
			},
		},
		"Changed": {
			reason:   "A new resourceVersion in the metadata cache makes the Secret be read again.",
			metadata: func(c client.Client) client.Reader { return c },
			change: func(ctx context.Context, c client.Client) error {
				s := &corev1.Secret{}
				if err := c.Get(ctx, nn, s); err != nil {
					return err
				}
				s.Data = map[string][]byte{"pw": []byte("two")}
				return c.Update(ctx, s)
			},
			reads: []read{
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
				{Key{Value: []byte("two"), ResourceVersion: "2"}, 2},
				{Key{Value: []byte("two"), ResourceVersion: "2"}, 2},
			},
		},
		"MetadataUnknown": {
			reason:   "While the metadata cache does not know the Secret, every read goes to the API server.",
			metadata: func(c client.Client) client.Reader { return unsynced{c} },
			reads: []read{
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 1},
				{Key{Value: []byte("one"), ResourceVersion: "1"}, 2},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			kube := fake.NewClientBuilder().WithObjects(&corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: nn.Name, ResourceVersion: "1"},
				Data:       map[string][]byte{"pw": []byte("one")},
			}).Build()
			api := &countingReader{Reader: kube}
			m := NewMemo(tc.metadata(kube), api)
			for i, r := range tc.reads {
				if i == 1 && tc.change != nil {
					if err := tc.change(ctx, kube); err != nil {
						t.Fatal(err)
					}
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

// A deleted Secret is the API server's NotFound, and its value is forgotten.
func TestMemoDeleted(t *testing.T) {
	ctx := context.Background()
	nn := types.NamespacedName{Namespace: "ns", Name: "ci"}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: nn.Name}, Data: map[string][]byte{"pw": []byte("one")}}
	kube := fake.NewClientBuilder().WithObjects(s).Build()
	m := NewMemo(kube, kube)
	if _, err := m.Key(ctx, nn, "pw"); err != nil {
		t.Fatal(err)
	}
	if err := kube.Delete(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Key(ctx, nn, "pw"); !kerrors.IsNotFound(err) {
		t.Fatalf("Key of a deleted Secret = %v, want NotFound", err)
	}
	if len(m.read) != 0 {
		t.Errorf("the memo still holds %d Secrets after the only one was deleted", len(m.read))
	}
	if _, err := m.Key(ctx, nn, "other"); !kerrors.IsNotFound(err) {
		t.Fatalf("Key of a deleted Secret = %v, want NotFound", err)
	}
}
