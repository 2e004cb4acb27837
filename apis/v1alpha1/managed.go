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
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// ResourceSpec is what every managed resource of this provider has in its
// spec: how it names its ProxmoxConnection, what the provider may do, and
// where its connection details go. Each kind embeds it inline, and
// hack/managedgen writes the kind's resource.Managed accessors over it.
//
// The Crossplane fields (providerConfigRef, writeConnectionSecretToRef,
// managementPolicies) have the JSON of Crossplane's ManagedResourceSpec but
// are declared here, because that type defaults providerConfigRef to a
// ClusterProviderConfig and defaults apply before validation: a
// connectionRef-only manifest would then disagree with that default. The
// reference is resolved in code instead (see Connection).
//
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind == 'ProxmoxConnection'",message="providerConfigRef.kind must be ProxmoxConnection"
// +kubebuilder:validation:XValidation:rule="!(has(self.providerConfigRef) && has(self.connectionRef)) || self.providerConfigRef.name == self.connectionRef.name",message="providerConfigRef.name and connectionRef.name must name the same ProxmoxConnection when both are set"
type ResourceSpec struct {
	// WriteConnectionSecretToReference names a Secret in this namespace to
	// which the resource's connection details are written (the keys of each
	// kind are listed on its page under docs/kinds).
	// +optional
	WriteConnectionSecretToReference *xpv2.LocalSecretReference `json:"writeConnectionSecretToRef,omitempty"`

	// ProviderConfigReference names the ProxmoxConnection to use. Its kind
	// must be ProxmoxConnection. When omitted, connectionRef is used, else the
	// connection named "default". There is deliberately no default here.
	// +optional
	ProviderConfigReference *xpv2.ProviderConfigReference `json:"providerConfigRef,omitempty"`

	// ManagementPolicies specify the actions the provider may take on the
	// Proxmox VE object. ["Observe"] imports an existing one (set the
	// crossplane.io/external-name annotation to its identifier); leaving
	// Delete out keeps it when this resource is deleted.
	// +kubebuilder:default={"*"}
	// +optional
	ManagementPolicies xpv2.ManagementPolicies `json:"managementPolicies,omitempty"`

	// ConnectionRef names the ProxmoxConnection to use (kubemox's field).
	// Equivalent to providerConfigRef {kind: ProxmoxConnection, name}.
	// +optional
	ConnectionRef *ConnectionReference `json:"connectionRef,omitempty"`
}

// Connection resolves the ProxmoxConnection the resource uses:
// providerConfigRef if set, else connectionRef, else the connection named
// "default". The result is never nil and always has kind ProxmoxConnection
// when derived; admission rejects any other kind in providerConfigRef. It
// returns a copy: changing it does not change the spec.
func (s *ResourceSpec) Connection() *xpv2.ProviderConfigReference {
	switch {
	case s.ProviderConfigReference != nil:
		ref := *s.ProviderConfigReference
		return &ref
	case s.ConnectionRef != nil:
		return &xpv2.ProviderConfigReference{Kind: ProxmoxConnectionKind, Name: s.ConnectionRef.Name}
	default:
		return &xpv2.ProviderConfigReference{Kind: ProxmoxConnectionKind, Name: DefaultConnectionName}
	}
}

// Policies are spec.managementPolicies narrowed by kubemox's reconcile-mode
// annotation when the resource has one (WatchOnly: Observe; EnsureExists:
// Observe, Create, Delete; Disable: none, which pauses). An unknown mode
// narrows nothing.
func (s *ResourceSpec) Policies(annotations map[string]string) xpv2.ManagementPolicies {
	allowed, narrowed := reconcileModePolicies(annotations[AnnotationReconcileMode])
	if !narrowed {
		return s.ManagementPolicies
	}
	return intersectPolicies(s.ManagementPolicies, allowed)
}

// DefaultConnectionName is the ProxmoxConnection a managed resource uses when
// it names none.
const DefaultConnectionName = "default"

// AnnotationReconcileMode is kubemox's per-resource reconcile mode. It is
// honoured by GetManagementPolicies, so it narrows what the provider may do
// without rewriting spec.
const AnnotationReconcileMode = "proxmox.alperen.cloud/reconcile-mode"

// kubemox reconcile modes.
const (
	// ReconcileModeReconcile is the default: spec.managementPolicies apply.
	ReconcileModeReconcile = "Reconcile"
	// ReconcileModeWatchOnly observes and changes nothing.
	ReconcileModeWatchOnly = "WatchOnly"
	// ReconcileModeEnsureExists creates (and deletes) the external resource
	// but never updates it.
	ReconcileModeEnsureExists = "EnsureExists"
	// ReconcileModeDisable pauses reconciliation.
	ReconcileModeDisable = "Disable"
)

// reconcileModePolicies returns the actions a kubemox reconcile mode allows,
// and false when the mode does not narrow spec.managementPolicies.
func reconcileModePolicies(mode string) (xpv2.ManagementPolicies, bool) {
	switch mode {
	case ReconcileModeWatchOnly:
		return xpv2.ManagementPolicies{xpv2.ManagementActionObserve}, true
	case ReconcileModeEnsureExists:
		return xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionDelete}, true
	case ReconcileModeDisable:
		return xpv2.ManagementPolicies{}, true
	default:
		return nil, false
	}
}

// intersectPolicies keeps the actions of allowed that spec also grants, in
// allowed's order, so the result is one of crossplane-runtime's supported
// combinations.
func intersectPolicies(spec, allowed xpv2.ManagementPolicies) xpv2.ManagementPolicies {
	granted := make(map[xpv2.ManagementAction]bool, len(spec))
	for _, a := range spec {
		granted[a] = true
	}
	out := xpv2.ManagementPolicies{}
	for _, a := range allowed {
		if granted[a] || granted[xpv2.ManagementActionAll] {
			out = append(out, a)
		}
	}
	return out
}
