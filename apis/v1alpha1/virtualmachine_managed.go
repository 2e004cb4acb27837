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

// IsClone reports whether the spec asks for a clone of a template, named or
// referenced. A template with neither creates the VM from scratch.
func (s *VirtualMachineSpec) IsClone() bool {
	return s.Template != nil && (s.Template.Name != "" || s.Template.TemplateRef != nil)
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
