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

// Package secrets reads the keys of Kubernetes Secrets that resources name
// (a ProxmoxConnection's credentials, a VM's cloud-init password) with the
// resourceVersion they were read at: the version is what status may record,
// the value never.
package secrets

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// ErrKeyNotFound is wrapped by Key when the Secret exists without the key.
var ErrKeyNotFound = errors.New("key not found in Secret")

// Key is one key of a Secret as read.
type Key struct {
	// Value must never be logged, evented or written to status.
	Value []byte
	// ResourceVersion of the Secret the value was read from.
	ResourceVersion string
}

// Read is a Secret a Reader read, at the resourceVersion it read.
type Read struct {
	types.NamespacedName
	ResourceVersion string
}

// Reader reads Secrets straight from the API server (Secrets never enter an
// informer), each one once: make one Reader per reconcile.
type Reader struct {
	kube  client.Reader
	cache map[types.NamespacedName]*corev1.Secret
	read  []Read
}

// NewReader returns a Reader over kube, an uncached reader.
func NewReader(kube client.Reader) *Reader {
	return &Reader{kube: kube, cache: map[types.NamespacedName]*corev1.Secret{}}
}

// Key returns key of Secret nn. An error from the API server is returned as
// it is (it names the object, never its data), so callers can tell a
// missing Secret with kerrors.IsNotFound; a missing key wraps
// ErrKeyNotFound.
func (r *Reader) Key(ctx context.Context, nn types.NamespacedName, key string) (Key, error) {
	s, err := r.secret(ctx, nn)
	if err != nil {
		return Key{}, err
	}
	v, ok := s.Data[key]
	if !ok {
		return Key{}, errors.Wrapf(ErrKeyNotFound, "key %q of Secret %s/%s", key, nn.Namespace, nn.Name)
	}
	return Key{Value: v, ResourceVersion: s.GetResourceVersion()}, nil
}

// Read lists the Secrets read so far, in the order first read.
func (r *Reader) Read() []Read { return r.read }

func (r *Reader) secret(ctx context.Context, nn types.NamespacedName) (*corev1.Secret, error) {
	if s, ok := r.cache[nn]; ok {
		return s, nil
	}
	s := &corev1.Secret{}
	if err := r.kube.Get(ctx, nn, s); err != nil {
		return nil, err
	}
	r.cache[nn] = s
	r.read = append(r.read, Read{NamespacedName: nn, ResourceVersion: s.GetResourceVersion()})
	return s, nil
}
