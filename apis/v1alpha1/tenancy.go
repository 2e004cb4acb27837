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
)

// AllowedNamespaces says which namespaces' resources may use a connection.
// A namespace is allowed when names lists it or selector matches its labels
// (either is enough); a resource in any other namespace is refused before
// any request reaches Proxmox VE.
//
// +kubebuilder:validation:XValidation:rule="has(self.names) || has(self.selector)",message="allowedNamespaces needs names or selector: leave allowedNamespaces unset to allow every namespace"
type AllowedNamespaces struct {
	// Names of the namespaces allowed.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +listType=set
	// +optional
	Names []string `json:"names,omitempty"`

	// Selector allows the namespaces whose labels it matches. The provider
	// reads the Namespace to match it, which Crossplane does not grant a
	// provider: bind its ServiceAccount to a ClusterRole allowing get on
	// namespaces (see the tenancy guide). An empty selector matches every
	// namespace.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}
