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

// Container type metadata.
var (
	ContainerKind             = reflect.TypeFor[Container]().Name()
	ContainerGroupKind        = schema.GroupKind{Group: Group, Kind: ContainerKind}.String()
	ContainerKindAPIVersion   = ContainerKind + "." + SchemeGroupVersion.String()
	ContainerGroupVersionKind = SchemeGroupVersion.WithKind(ContainerKind)

	ContainerListKind             = reflect.TypeFor[ContainerList]().Name()
	ContainerListGroupVersionKind = SchemeGroupVersion.WithKind(ContainerListKind)
)

func init() {
	SchemeBuilder.Register(&Container{}, &ContainerList{})
}

// AutoStart reports whether a stopped container is to be started (default
// true).
func (s *ContainerSpec) AutoStart() bool {
	return s.EnableAutoStart == nil || *s.EnableAutoStart
}

// MayReboot reports whether the container may be restarted to apply
// pending changes (default true).
func (s *ContainerSpec) MayReboot() bool {
	return s.RebootPolicy != RebootPolicyNever
}

// IsFullClone reports whether a clone copies the template's volumes (the
// default) rather than linking to them.
func (t *ContainerTemplate) IsFullClone() bool {
	return t.FullClone == nil || *t.FullClone
}

// IsUnprivileged reports whether the container is created unprivileged
// (default true, as Proxmox VE's web UI).
func (t *ContainerTemplate) IsUnprivileged() bool {
	return t.Unprivileged == nil || *t.Unprivileged
}

// Source returns the image reference or ostemplate the spec creates from,
// as status.source records it; nil for a clone or an import.
func (s *ContainerSpec) Source() *ContainerSource {
	switch t := s.Template; {
	case t == nil:
		return nil
	case t.Image != nil:
		return &ContainerSource{ImageReference: t.Image.Reference}
	case t.OSTemplate != "":
		return &ContainerSource{OSTemplate: t.OSTemplate}
	}
	return nil
}
