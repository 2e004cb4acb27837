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
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MayLateInit reports whether Observe may fill the spec's unset fields from
// the guest: the policies name LateInitialize itself, and no other object
// controls the resource.
//
// "*" does not: the API promises that a field left out is left as Proxmox
// VE has it (kubemox's meaning, which its manifests rely on), and late-init
// would make the first value seen a managed one. A controller (a
// VirtualMachineSet) rewrites the spec it owns, so filling it would make
// the two fight.
func MayLateInit(mg resource.ModernManaged) bool {
	if metav1.GetControllerOf(mg) != nil {
		return false
	}
	for _, a := range mg.GetManagementPolicies() {
		if a == xpv2.ManagementActionLateInitialize {
			return true
		}
	}
	return false
}
