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

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// ErrConnectionNotFound means the ProxmoxConnection a resource uses does
// not exist (as opposed to existing without a working client yet).
var ErrConnectionNotFound = errors.New("ProxmoxConnection does not exist")

// UsageTracker records that a managed resource uses its ProxmoxConnection.
type UsageTracker interface {
	Track(ctx context.Context, mg resource.ModernManaged) error
}

// Connect records that mg uses its ProxmoxConnection (so the connection is
// not deleted under it), then returns the connection's name and its current
// Proxmox client from the cache (the ProxmoxConnection controller keeps it
// up to date with the credential). A namespace the connection does not
// allow is refused first, wrapping ErrNamespaceNotAllowed, with no usage
// recorded. When the cache has no client, r says whether the connection
// exists at all: a missing one is named, with why mg uses it, wrapping
// ErrConnectionNotFound.
func Connect(ctx context.Context, r Readers, usage UsageTracker, clients *pve.Cache, mg resource.ModernManaged) (*pve.Client, string, error) {
	name := mg.GetProviderConfigReference().Name
	if err := admit(ctx, r, mg.GetNamespace(), name); err != nil {
		return nil, "", err
	}
	if err := usage.Track(ctx, mg); err != nil {
		return nil, "", errors.Wrap(err, "cannot track ProxmoxConnection usage")
	}
	cl, err := cached(ctx, r.Kube, clients, mg, name)
	if err != nil {
		return nil, "", errors.Wrap(err, "cannot get a Proxmox VE client")
	}
	return cl, name, nil
}

// ClientOf returns connection's current client from clients, for o: the
// one path by which every kind that does not go through Connect reaches
// Proxmox VE. A namespace the connection does not allow is refused,
// wrapping ErrNamespaceNotAllowed. When there is no client, r says whether
// the connection exists at all: a missing one is named, with why o uses it,
// wrapping ErrConnectionNotFound; otherwise the cache's pve.ErrNotReady is
// returned.
func ClientOf(ctx context.Context, r Readers, clients *pve.Cache, o client.Object, connection string) (*pve.Client, error) {
	if err := admit(ctx, r, o.GetNamespace(), connection); err != nil {
		return nil, err
	}
	return cached(ctx, r.Kube, clients, o, connection)
}

// cached returns connection's client from clients, naming a connection
// that does not exist (see ClientOf).
func cached(ctx context.Context, kube client.Reader, clients *pve.Cache, o runtime.Object, connection string) (*pve.Client, error) {
	cl, err := clients.Get(connection)
	if !errors.Is(err, pve.ErrNotReady) {
		return cl, err
	}
	err2 := kube.Get(ctx, types.NamespacedName{Name: connection}, &v1alpha1.ProxmoxConnection{})
	switch {
	case kerrors.IsNotFound(err2):
		return nil, errors.Wrapf(ErrConnectionNotFound, "ProxmoxConnection %q does not exist (%s): create it, or name an existing one in spec.connectionRef",
			connection, connectionChoice(o))
	case err2 != nil:
		return nil, errors.Wrapf(err, "cannot tell whether ProxmoxConnection %q exists: %v", connection, err2)
	}
	return nil, err
}

// connectionChoice says why o uses its connection: the field naming it,
// or that none does and the default applies.
func connectionChoice(o runtime.Object) string {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return "the connection the resource names"
	}
	spec, _ := u["spec"].(map[string]any)
	switch {
	case spec["providerConfigRef"] != nil:
		return "named by spec.providerConfigRef"
	case spec["connectionRef"] != nil:
		return "named by spec.connectionRef"
	}
	return "spec.connectionRef is unset, so the connection named " + `"` + v1alpha1.DefaultConnectionName + `"` + " is used"
}
