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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// AnnotationAdopt overrides, on one guest resource, its connection's
// adoption policy: "true" adopts a guest marked by the same kind, namespace
// and name in any management cluster; "false" never adopts one, not even
// from this cluster, and creates a new guest beside it.
const AnnotationAdopt = "proxmox.alperen.cloud/adopt"

// AdoptionPolicy says which guests a resource without an external name may
// adopt: those whose marker names the same kind, namespace and name. A guest
// marked by this management cluster is always adopted (its resource was
// deleted with deletionPolicy Orphan, or management policies without Delete,
// and applied again). One marked by another cluster, or by no cluster known
// (a marker older than cluster identities, or a provider that may not read
// the kube-system namespace), is adopted only when listed here; otherwise
// the resource creates nothing and waits, saying which guest it found.
// +kubebuilder:validation:XValidation:rule="!(has(self.anyCluster) && self.anyCluster && has(self.fromClusters) && size(self.fromClusters) > 0)",message="adoption: set anyCluster or list fromClusters, not both"
type AdoptionPolicy struct {
	// FromClusters are the management cluster identities (the cluster= of
	// a marker, the kube-system namespace's UID by default) whose guests
	// are adopted. "unknown" stands for markers naming no cluster.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[-A-Za-z0-9_.:]+$`
	// +listType=set
	// +optional
	FromClusters []string `json:"fromClusters,omitempty"`

	// AnyCluster adopts guests marked by any management cluster, or by none.
	// Only for a cluster replacing another: two live management clusters
	// using the same names on one Proxmox VE would take each other's guests.
	// +optional
	AnyCluster bool `json:"anyCluster,omitempty"`
}

// UnknownCluster is how FromClusters names markers that name no cluster.
const UnknownCluster = "unknown"

// AdoptionStatus records that a resource adopted an existing guest instead
// of creating one.
type AdoptionStatus struct {
	// FromCluster is the management cluster identity the guest's marker
	// named ("unknown" when it named none).
	FromCluster string `json:"fromCluster"`

	// VMID of the adopted guest.
	VMID int32 `json:"vmid"`

	// PreviousUID is the UID of the resource the marker named.
	// +optional
	PreviousUID string `json:"previousUID,omitempty"`

	// Time of the adoption.
	Time metav1.Time `json:"time"`
}

// ReasonAdoptionRequired is the reason of a guest resource's Ready
// condition while it waits because it found a guest marked by the same
// kind, namespace and name in another management cluster, which its
// connection's adoption policy does not let it adopt.
const ReasonAdoptionRequired xpv2.ConditionReason = "AdoptionRequired"
