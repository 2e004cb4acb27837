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
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

// VirtualMachine type metadata.
var (
	VirtualMachineKind             = reflect.TypeFor[VirtualMachine]().Name()
	VirtualMachineGroupKind        = schema.GroupKind{Group: Group, Kind: VirtualMachineKind}.String()
	VirtualMachineKindAPIVersion   = VirtualMachineKind + "." + SchemeGroupVersion.String()
	VirtualMachineGroupVersionKind = SchemeGroupVersion.WithKind(VirtualMachineKind)

	VirtualMachineListKind             = reflect.TypeFor[VirtualMachineList]().Name()
	VirtualMachineListGroupVersionKind = SchemeGroupVersion.WithKind(VirtualMachineListKind)
)

func init() {
	SchemeBuilder.Register(&VirtualMachine{}, &VirtualMachineList{})
}

// The accessors below are written by hand: angryjet generates them only for
// a spec embedding xpv2.ManagedResourceSpec, whose providerConfigRef default
// this API must not have (see VirtualMachineSpec).
var _ resource.ModernManaged = &VirtualMachine{}

var _ resource.ManagedList = &VirtualMachineList{}

// GetCondition of this VirtualMachine.
func (mg *VirtualMachine) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this VirtualMachine.
func (mg *VirtualMachine) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies the provider may apply to this VirtualMachine:
// spec.managementPolicies, narrowed by kubemox's reconcile-mode annotation
// when one is set (WatchOnly: Observe; EnsureExists: Observe, Create,
// Delete; Disable: none, which pauses). An unknown mode narrows nothing.
func (mg *VirtualMachine) GetManagementPolicies() xpv2.ManagementPolicies {
	return managementPolicies(mg.GetAnnotations(), mg.Spec.ManagementPolicies)
}

// SetManagementPolicies of this VirtualMachine.
func (mg *VirtualMachine) SetManagementPolicies(p xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = p
}

// GetProviderConfigReference resolves the ProxmoxConnection this
// VirtualMachine uses: providerConfigRef if set, else connectionRef, else the
// connection named "default". The result is never nil and always has kind
// ProxmoxConnection when derived; admission rejects any other kind in
// providerConfigRef. It returns a copy: changing it does not change spec.
func (mg *VirtualMachine) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return resolveConnection(mg.Spec.ProviderConfigReference, mg.Spec.ConnectionRef)
}

// SetProviderConfigReference of this VirtualMachine.
func (mg *VirtualMachine) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this VirtualMachine.
func (mg *VirtualMachine) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this VirtualMachine.
func (mg *VirtualMachine) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetItems of this VirtualMachineList.
func (l *VirtualMachineList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

// CloudInit returns the cloud-init configuration wherever the manifest put
// it (spec, spec.template or spec.vmSpec; admission allows one place only),
// or nil.
func (s *VirtualMachineSpec) CloudInit() *CloudInitConfig {
	switch {
	case s.CloudInitConfig != nil:
		return s.CloudInitConfig
	case s.Template != nil && s.Template.CloudInitConfig != nil:
		return s.Template.CloudInitConfig
	case s.VMSpec != nil:
		return s.VMSpec.CloudInitConfig
	default:
		return nil
	}
}

// Hardware returns the hardware of whichever mode the spec uses, or nil for
// an import that sets neither template nor vmSpec.
func (s *VirtualMachineSpec) Hardware() *VirtualMachineHardware {
	switch {
	case s.Template != nil:
		return &s.Template.VirtualMachineHardware
	case s.VMSpec != nil:
		return &s.VMSpec.VirtualMachineHardware
	default:
		return nil
	}
}

// IsClone reports whether the spec asks for a clone of a named template. A
// template without a name creates the VM from scratch.
func (s *VirtualMachineSpec) IsClone() bool {
	return s.Template != nil && s.Template.Name != ""
}

// IsFullClone reports whether a clone copies the template's disks (the
// default) rather than linking to them.
func (s *VirtualMachineSpec) IsFullClone() bool {
	return s.Template == nil || s.Template.FullClone == nil || *s.Template.FullClone
}

// AutoStart reports whether a stopped VM is to be started (default true).
func (s *VirtualMachineSpec) AutoStart() bool {
	return s.EnableAutoStart == nil || *s.EnableAutoStart
}

// MayReboot reports whether the VM may be rebooted to apply pending changes
// (default true).
func (s *VirtualMachineSpec) MayReboot() bool {
	return s.RebootPolicy != RebootPolicyNever
}

// UpgradesPackages reports whether cloud-init upgrades packages (default
// true).
func (c *CloudInitConfig) UpgradesPackages() bool {
	return c.UpgradePackages == nil || *c.UpgradePackages
}
