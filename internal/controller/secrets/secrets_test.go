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
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

func TestReaderKey(t *testing.T) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "creds", ResourceVersion: "42"},
		Data:       map[string][]byte{"password": []byte("hunter2"), "empty": {}},
	}
	creds := types.NamespacedName{Namespace: "ns", Name: "creds"}
	cases := map[string]struct {
		reason   string
		nn       types.NamespacedName
		key      string
		want     Key
		notFound bool
		noKey    bool
	}{
		"Value": {
			reason: "A key is returned with the Secret's resourceVersion.",
			nn:     creds, key: "password",
			want: Key{Value: []byte("hunter2"), ResourceVersion: "42"},
		},
		"EmptyValue": {
			reason: "An empty value is a value: whether it is allowed is the caller's rule.",
			nn:     creds, key: "empty",
			want: Key{Value: []byte{}, ResourceVersion: "42"},
		},
		"NoKey": {
			reason: "A Secret without the key wraps ErrKeyNotFound.",
			nn:     creds, key: "token",
			noKey: true,
		},
		"NoSecret": {
			reason: "A missing Secret is the API server's NotFound.",
			nn:     types.NamespacedName{Namespace: "ns", Name: "absent"}, key: "password",
			notFound: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := NewReader(fake.NewClientBuilder().WithObjects(s.DeepCopy()).Build())
			got, err := r.Key(context.Background(), tc.nn, tc.key)
			if kerrors.IsNotFound(err) != tc.notFound || errors.Is(err, ErrKeyNotFound) != tc.noKey {
				t.Fatalf("%s\nKey(...): unexpected error %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nKey(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestReaderReadsEachSecretOnce(t *testing.T) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "creds", ResourceVersion: "7"},
		Data:       map[string][]byte{"a": []byte("1"), "b": []byte("2")},
	}
	kube := fake.NewClientBuilder().WithObjects(s).Build()
	r := NewReader(kube)
	nn := types.NamespacedName{Namespace: "ns", Name: "creds"}
	if _, err := r.Key(context.Background(), nn, "a"); err != nil {
		t.Fatal(err)
	}
	if err := kube.Delete(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	// The second key comes from the Secret as first read: one revision per
	// reconcile, never a mix of two.
	if k, err := r.Key(context.Background(), nn, "b"); err != nil || string(k.Value) != "2" {
		t.Fatalf("second key: %q, %v", k.Value, err)
	}
	want := []Read{{NamespacedName: nn, ResourceVersion: "7"}}
	if diff := cmp.Diff(want, r.Read()); diff != "" {
		t.Errorf("Read(): -want, +got:\n%s", diff)
	}
}
