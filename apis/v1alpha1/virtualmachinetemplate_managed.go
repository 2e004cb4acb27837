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

// VirtualMachineTemplate type metadata.
var (
	VirtualMachineTemplateKind             = reflect.TypeFor[VirtualMachineTemplate]().Name()
	VirtualMachineTemplateGroupKind        = schema.GroupKind{Group: Group, Kind: VirtualMachineTemplateKind}.String()
	VirtualMachineTemplateKindAPIVersion   = VirtualMachineTemplateKind + "." + SchemeGroupVersion.String()
	VirtualMachineTemplateGroupVersionKind = SchemeGroupVersion.WithKind(VirtualMachineTemplateKind)

	VirtualMachineTemplateListKind             = reflect.TypeFor[VirtualMachineTemplateList]().Name()
	VirtualMachineTemplateListGroupVersionKind = SchemeGroupVersion.WithKind(VirtualMachineTemplateListKind)
)

func init() {
	SchemeBuilder.Register(&VirtualMachineTemplate{}, &VirtualMachineTemplateList{})
}

// DiskStorage is the storage of the imported disk and the cloud-init drive
// (default local-lvm).
func (c *VirtualMachineConfig) DiskStorage() string {
	if c.Storage == nil || *c.Storage == "" {
		return "local-lvm"
	}
	return *c.Storage
}
