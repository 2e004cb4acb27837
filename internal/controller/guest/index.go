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
	"strconv"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/internal/controller/gated"
)

// IndexGuestKey indexes guest resources by the guest they name: their
// connection and VMID (KeyOf). An import finds with it the guests that a
// resource already manages or observes, whatever its namespace; Observe-only
// resources write no marker into the guest, so the guest itself cannot say.
const IndexGuestKey = "proxmox.alperen.cloud/guest"

// KeyOf is the IndexGuestKey value of the guest vmid of a connection.
func KeyOf(connection string, vmid int) string {
	return connection + "/" + strconv.Itoa(vmid)
}

// IndexByGuest adds the IndexGuestKey index over the guest kind of obj (a
// resource whose external name is a VMID).
func IndexByGuest(mgr ctrl.Manager, obj client.Object) error {
	return gated.IndexField(mgr, obj, IndexGuestKey, guestKeyOf)
}

func guestKeyOf(o client.Object) []string {
	mg, ok := o.(resource.ModernManaged)
	if !ok {
		return nil
	}
	vmid, ok := VMIDOf(meta.GetExternalName(mg))
	if !ok {
		return nil
	}
	return []string{KeyOf(mg.GetProviderConfigReference().Name, vmid)}
}

// errIndex wraps a failed lookup in the index.
func errIndex(err error) error { return errors.Wrap(err, "cannot look up guest resources by VMID") }

// ClaimedBy lists the resources of list's kind (any namespace) that name the
// guest vmid of connection, as "namespace/name".
func ClaimedBy(ctx context.Context, kube client.Reader, list resource.ManagedList, connection string, vmid int) ([]string, error) {
	if err := kube.List(ctx, list, client.MatchingFields{IndexGuestKey: KeyOf(connection, vmid)}); err != nil {
		return nil, errIndex(err)
	}
	var out []string
	for _, mg := range list.GetItems() {
		out = append(out, mg.GetNamespace()+"/"+mg.GetName())
	}
	return out, nil
}
