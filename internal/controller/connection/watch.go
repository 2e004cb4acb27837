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

package connection

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// IndexSecretRefs indexes ProxmoxConnections by "namespace/name" of every
// Secret they reference (passwordFrom, secretFrom, caFrom).
const IndexSecretRefs = "spec.secretRefs"

// secretRefKeys returns the IndexSecretRefs values of a ProxmoxConnection.
func secretRefKeys(o client.Object) []string {
	pc, ok := o.(*v1alpha1.ProxmoxConnection)
	if !ok {
		return nil
	}
	refs := pc.Spec.SecretRefs()
	keys := make([]string, 0, len(refs))
	for _, ref := range refs {
		keys = append(keys, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}.String())
	}
	return keys
}

// connectionsReferencingSecret maps an event on a Secret's metadata to the
// connections that read it. The event object carries metadata only.
func connectionsReferencingSecret(kube client.Reader, log logging.Logger) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String()
		l := &v1alpha1.ProxmoxConnectionList{}
		if err := kube.List(ctx, l, client.MatchingFields{IndexSecretRefs: key}); err != nil {
			// The connection's periodic verification still picks the change up.
			log.Info("Cannot list ProxmoxConnections referencing a Secret", "secret", key, "error", err)
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(l.Items))
		for _, pc := range l.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: pc.GetName()}})
		}
		return reqs
	}
}

// connectionOfUsage maps a ProviderConfigUsage to the connection it counts
// towards. ProxmoxConnection is cluster-scoped, so the request carries no
// namespace even though the usage has one (crossplane-runtime's
// EnqueueRequestForProviderConfig would add it for any kind not named
// Cluster*).
func connectionOfUsage(_ context.Context, o client.Object) []reconcile.Request {
	u, ok := o.(*v1alpha1.ProviderConfigUsage)
	if !ok {
		return nil
	}
	ref := u.ProviderConfigReference
	if ref.Name == "" || (ref.Kind != "" && ref.Kind != v1alpha1.ProxmoxConnectionKind) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: ref.Name}}}
}
