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
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Memo reads keys of Secrets that resources read on every poll (a VM's
// cloud-init passwordFrom) and reads each Secret from the API server only
// when the Secret watch saw its resourceVersion move from the one it was
// last read at: a Secret that does not change costs no request.
//
// The values it keeps are those of Secrets some resource names, each one
// once, never a Secret nobody asked for. Safe for concurrent use.
type Memo struct {
	watch *Watch        // follows the resourceVersions of the Secrets read here
	api   client.Reader // uncached

	mu   sync.Mutex
	read map[types.NamespacedName]memoEntry
}

type memoEntry struct {
	resourceVersion string
	data            map[string][]byte
}

// NewMemo returns a Memo that learns of changes from watch and reads
// Secrets from api.
func NewMemo(watch *Watch, api client.Reader) *Memo {
	return &Memo{watch: watch, api: api, read: map[types.NamespacedName]memoEntry{}}
}

// Key returns key of Secret nn, as Reader.Key does.
func (m *Memo) Key(ctx context.Context, nn types.NamespacedName, key string) (Key, error) {
	e, err := m.secret(ctx, nn)
	if err != nil {
		return Key{}, err
	}
	v, ok := e.data[key]
	if !ok {
		return Key{}, errors.Wrapf(ErrKeyNotFound, "key %q of Secret %s/%s", key, nn.Namespace, nn.Name)
	}
	return Key{Value: v, ResourceVersion: e.resourceVersion}, nil
}

// secret returns the remembered Secret when the watch shows it at the
// version it was read at, and reads it again otherwise (the watch does not
// know the version until the Secret changes or was read once since it was
// followed).
func (m *Memo) secret(ctx context.Context, nn types.NamespacedName) (memoEntry, error) {
	if current, ok := m.watch.Version(nn); ok {
		m.mu.Lock()
		e, ok := m.read[nn]
		m.mu.Unlock()
		if ok && e.resourceVersion == current {
			return e, nil
		}
	}
	mark := m.watch.Follow(nn)
	s := &corev1.Secret{}
	if err := m.api.Get(ctx, nn, s); err != nil {
		if kerrors.IsNotFound(err) {
			m.forget(nn)
		}
		return memoEntry{}, err
	}
	m.watch.Learned(nn, s.GetResourceVersion(), mark)
	e := memoEntry{resourceVersion: s.GetResourceVersion(), data: s.Data}
	m.mu.Lock()
	m.read[nn] = e
	m.mu.Unlock()
	return e, nil
}

func (m *Memo) forget(nn types.NamespacedName) {
	m.watch.Unfollow(nn)
	m.mu.Lock()
	delete(m.read, nn)
	m.mu.Unlock()
}
