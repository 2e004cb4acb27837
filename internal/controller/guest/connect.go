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

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// UsageTracker records that a managed resource uses its ProxmoxConnection.
type UsageTracker interface {
	Track(ctx context.Context, mg resource.ModernManaged) error
}

// Connect records that mg uses its ProxmoxConnection (so the connection is
// not deleted under it), then returns the connection's name and its current
// Proxmox client from the cache (the ProxmoxConnection controller keeps it
// up to date with the credential).
func Connect(ctx context.Context, usage UsageTracker, clients *pve.Cache, mg resource.ModernManaged) (*pve.Client, string, error) {
	if err := usage.Track(ctx, mg); err != nil {
		return nil, "", errors.Wrap(err, "cannot track ProxmoxConnection usage")
	}
	name := mg.GetProviderConfigReference().Name
	cl, err := clients.Get(name)
	if err != nil {
		return nil, "", errors.Wrap(err, "cannot get a Proxmox VE client")
	}
	return cl, name, nil
}
