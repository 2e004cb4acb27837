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
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// ErrNamespaceNotAllowed means a resource's namespace is not among those its
// ProxmoxConnection's spec.allowedNamespaces allows.
var ErrNamespaceNotAllowed = errors.New("its spec.allowedNamespaces neither lists nor selects the namespace")

// Readers are the two ways a connect reads the API server.
type Readers struct {
	// Kube reads through the manager's cache: ProxmoxConnections, which
	// the provider watches anyway.
	Kube client.Reader
	// Fresh reads straight from the API server: Namespaces, read only for
	// a connection with a namespace selector. A cached read would start a
	// cluster-wide Namespace informer, needing list and watch on namespaces
	// that Crossplane does not grant a provider; a missing grant would then
	// hang the reconcile instead of failing it.
	Fresh client.Reader
}

// admit returns nil when a resource in namespace may use connection, and an
// error wrapping ErrNamespaceNotAllowed, naming both and how to allow it,
// when it may not. A connection that does not exist restricts nothing: the
// caller reports it missing.
func admit(ctx context.Context, r Readers, namespace, connection string) error {
	pc := &v1alpha1.ProxmoxConnection{}
	err := r.Kube.Get(ctx, types.NamespacedName{Name: connection}, pc)
	switch {
	case kerrors.IsNotFound(err):
		return nil
	case err != nil:
		return errors.Wrapf(err, "cannot read ProxmoxConnection %q to check which namespaces may use it", connection)
	}
	allowed := pc.Spec.AllowedNamespaces
	if allowed == nil || namespace == "" {
		return nil
	}
	var nsLabels labels.Set
	if allowed.Selector != nil && !slices.Contains(allowed.Names, namespace) {
		ns := &corev1.Namespace{}
		if err := r.Fresh.Get(ctx, types.NamespacedName{Name: namespace}, ns); err != nil {
			return errors.Wrapf(err, "cannot read the labels of namespace %q to match ProxmoxConnection %q's spec.allowedNamespaces.selector (the provider's ServiceAccount needs get on namespaces: see the tenancy guide)", namespace, connection)
		}
		nsLabels = ns.Labels
	}
	ok, err := Allows(allowed, namespace, nsLabels)
	if err != nil {
		return errors.Wrapf(err, "ProxmoxConnection %q", connection)
	}
	if !ok {
		return errors.Wrap(ErrNamespaceNotAllowed, fmt.Sprintf("namespace %q may not use ProxmoxConnection %q: add it to the connection's spec.allowedNamespaces.names, label it to match spec.allowedNamespaces.selector, or use a connection that allows it", namespace, connection))
	}
	return nil
}

// Allows says whether allowed lets the namespace called name, labelled
// nsLabels, use its connection: nil allows every namespace; otherwise names
// listing it or selector matching its labels does.
func Allows(allowed *v1alpha1.AllowedNamespaces, name string, nsLabels labels.Set) (bool, error) {
	if allowed == nil || slices.Contains(allowed.Names, name) {
		return true, nil
	}
	if allowed.Selector == nil {
		return false, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(allowed.Selector)
	if err != nil {
		return false, errors.Wrap(err, "spec.allowedNamespaces.selector is not a valid label selector")
	}
	return sel.Matches(nsLabels), nil
}
