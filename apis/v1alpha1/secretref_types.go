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

// LocalSecretKeySelector selects a key of a Secret in the namespace of the
// object holding the reference.
type LocalSecretKeySelector struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Key within the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// OptionalSecretKeySelector selects a key of a Secret in the namespace of
// the resource naming it, which may be optional (kubemox's
// corev1.SecretKeySelector).
type OptionalSecretKeySelector struct {
	LocalSecretKeySelector `json:",inline"`

	// Optional, when true, lets the Secret or its key be missing: no
	// password is set then, as kubemox, and the password is set once the
	// key appears. When false or unset a missing Secret or key is an error.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}

// IsOptional reports whether the Secret or key may be missing.
func (s *OptionalSecretKeySelector) IsOptional() bool {
	return s != nil && s.Optional != nil && *s.Optional
}
