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

// What every managed resource of this provider shares in how it names its
// ProxmoxConnection and how kubemox's reconcile-mode annotation narrows its
// management policies. Each kind's accessors (GetProviderConfigReference,
// GetManagementPolicies) are one-line calls to these.

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

// resolveConnection is the ProxmoxConnection a resource uses: providerConfigRef
// if set (a copy), else connectionRef, else the connection named "default".
func resolveConnection(pcr *xpv2.ProviderConfigReference, cr *ConnectionReference) *xpv2.ProviderConfigReference {
	switch {
	case pcr != nil:
		ref := *pcr
		return &ref
	case cr != nil:
		return &xpv2.ProviderConfigReference{Kind: ProxmoxConnectionKind, Name: cr.Name}
	default:
		return &xpv2.ProviderConfigReference{Kind: ProxmoxConnectionKind, Name: DefaultConnectionName}
	}
}

// managementPolicies are spec's policies narrowed by kubemox's
// reconcile-mode annotation when one is set (WatchOnly: Observe;
// EnsureExists: Observe, Create, Delete; Disable: none, which pauses). An
// unknown mode narrows nothing.
func managementPolicies(annotations map[string]string, spec xpv2.ManagementPolicies) xpv2.ManagementPolicies {
	allowed, narrowed := reconcileModePolicies(annotations[AnnotationReconcileMode])
	if !narrowed {
		return spec
	}
	return intersectPolicies(spec, allowed)
}

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
