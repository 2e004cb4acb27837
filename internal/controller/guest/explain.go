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

package guest

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// Explained wraps a kind's external client so that every verb's error
// reaches the resource's conditions in the user's terms: a 403 names the
// privilege and path PVE found missing (pve.ExplainPermission).
type Explained[T resource.Managed] struct {
	managed.TypedExternalClient[T]
}

// Observe implements managed.TypedExternalClient.
func (e Explained[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	o, err := e.TypedExternalClient.Observe(ctx, mg)
	return o, pve.ExplainPermission(err)
}

// Create implements managed.TypedExternalClient.
func (e Explained[T]) Create(ctx context.Context, mg T) (managed.ExternalCreation, error) {
	c, err := e.TypedExternalClient.Create(ctx, mg)
	return c, pve.ExplainPermission(err)
}

// Update implements managed.TypedExternalClient.
func (e Explained[T]) Update(ctx context.Context, mg T) (managed.ExternalUpdate, error) {
	u, err := e.TypedExternalClient.Update(ctx, mg)
	return u, pve.ExplainPermission(err)
}

// Delete implements managed.TypedExternalClient.
func (e Explained[T]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	d, err := e.TypedExternalClient.Delete(ctx, mg)
	return d, pve.ExplainPermission(err)
}
