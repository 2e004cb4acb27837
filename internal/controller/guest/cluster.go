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
	"regexp"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// ClusterIDNamespace is the namespace whose UID identifies a management
// cluster by default: every Kubernetes cluster has it from its first start,
// and it keeps its UID for the cluster's life (it cannot be deleted). A
// cluster rebuilt from scratch, or restored by Velero (which recreates
// objects, never their UIDs), gets a new one.
const ClusterIDNamespace = "kube-system"

// clusterIDRe is what a cluster identity may be: it is written into markers
// (marker.go).
var clusterIDRe = regexp.MustCompile(`^[-A-Za-z0-9_.:]{1,63}$`)

// ErrBadClusterID is a configured cluster identity markers cannot carry.
var ErrBadClusterID = errors.New("a cluster identity is 1 to 63 letters, digits, '-', '_', '.' or ':'")

// ClusterIdentity is this management cluster's identity in markers: the
// configured one (the provider's --cluster-id) when set, else the UID of
// the kube-system namespace. Crossplane's default provider RBAC does not
// grant reading namespaces: when the read is forbidden the identity is
// empty, and markers name no cluster (see virtualmachine/doc.go for what
// that costs: guests of an orphaned resource are then adopted only with
// the opt-in).
func ClusterIdentity(ctx context.Context, kube client.Reader, configured string) (string, error) {
	if configured != "" {
		if !clusterIDRe.MatchString(configured) {
			return "", errors.Wrapf(ErrBadClusterID, "cluster identity %q", configured)
		}
		return configured, nil
	}
	ns := &corev1.Namespace{}
	err := kube.Get(ctx, types.NamespacedName{Name: ClusterIDNamespace}, ns)
	switch {
	case kerrors.IsForbidden(err) || kerrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", errors.Wrap(err, "cannot read the kube-system namespace, whose UID identifies this management cluster")
	}
	return string(ns.UID), nil
}
