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

// VMTemplateNetwork is the template's network interface (net0).
type VMTemplateNetwork struct {
	// Model of the NIC.
	// +kubebuilder:default=virtio
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Model string `json:"model,omitempty"`

	// Bridge the NIC is attached to.
	// +kubebuilder:default=vmbr0
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Bridge string `json:"bridge,omitempty"`
}

// VirtualMachineConfig is the template VM's hardware (kubemox's names).
type VirtualMachineConfig struct {
	// Sockets is the number of CPU sockets (Proxmox VE's sockets). No
	// maximum, as kubemox and Proxmox VE's schema.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	Sockets int32 `json:"sockets,omitempty"`

	// Cores is the number of CPU cores per socket (Proxmox VE's cores).
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=512
	// +optional
	Cores int32 `json:"cores,omitempty"`

	// Memory is the guest's memory in MiB (Proxmox VE's memory).
	// +kubebuilder:default=2048
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=4194304
	// +optional
	Memory int64 `json:"memory,omitempty"`

	// Network is the template's NIC.
	// +optional
	Network VMTemplateNetwork `json:"network,omitempty"`

	// Storage receives the imported disk and the cloud-init drive.
	// +kubebuilder:default=local-lvm
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Storage *string `json:"storage,omitempty"`
}

// VirtualMachineTemplateSpec is the desired state of a
// VirtualMachineTemplate. A template is immutable in Proxmox VE: after it
// is built, a change to what it was built from is reported, not applied.
type VirtualMachineTemplateSpec struct {
	// The connection, management policies and connection-detail Secret
	// (vmid, node and name are written to it).
	ResourceSpec `json:",inline"`

	// Name of the template VM in Proxmox VE (a DNS name); VirtualMachines
	// clone it by this name or by template.templateRef.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?[.])*[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$')",message="name must be a DNS name: letters, digits, hyphens and dots, as Proxmox VE requires"
	Name string `json:"name"`

	// NodeName is the node the template is built on (kubemox's "node").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	NodeName string `json:"node"`

	// DeletionProtection keeps the template in Proxmox VE when this
	// resource is deleted.
	// +kubebuilder:default=false
	// +optional
	DeletionProtection bool `json:"deletionProtection,omitempty"`

	// VirtualMachineConfig is the template's hardware.
	// +optional
	VirtualMachineConfig VirtualMachineConfig `json:"virtualMachineConfig,omitempty"`

	// ImageConfig is the cloud image the template's disk is imported from:
	// a StorageDownloadURL spec, made into a StorageDownloadURL owned by this
	// resource. import-from reads only content import (or images): an iso
	// download (kubemox's manifests) is converted to import, with an event.
	ImageConfig DownloadParameters `json:"imageConfig"`

	// CloudInitConfig is baked into the template.
	// +optional
	CloudInitConfig *CloudInitConfig `json:"cloudInitConfig,omitempty"`

	// AdditionalConfig sets raw Proxmox VE configuration keys at creation.
	// +kubebuilder:validation:MaxProperties=128
	// +optional
	AdditionalConfig map[string]string `json:"additionalConfig,omitempty"`
}

// Template build steps, in order.
const (
	TemplateStepImage    = "Image"
	TemplateStepCreate   = "Create"
	TemplateStepTemplate = "Template"
	TemplateStepDone     = "Done"
)

// VirtualMachineTemplateStatus is the observed state of a
// VirtualMachineTemplate.
type VirtualMachineTemplateStatus struct {
	// Conditions (Ready, Synced) and the observed generation.
	xpv2.ManagedResourceStatus `json:",inline"`
	PollStatus                 `json:",inline"`

	// Status is kubemox's one-word state: the build step under way, or
	// Ready.
	// +optional
	Status string `json:"status,omitempty"`

	// Step is the build step reached: Image (waiting for the image),
	// Create (the VM is being created with the disk imported, the
	// cloud-init drive, cloud-init and the boot order), Template (being
	// converted), Done.
	// +optional
	Step string `json:"step,omitempty"`

	// VMID of the template once the provider saw its own marker there.
	// +optional
	VMID int32 `json:"vmid,omitempty"`

	// Node the template is on.
	// +optional
	Node string `json:"node,omitempty"`

	// Image is the volume the disk was imported from.
	// +optional
	Image string `json:"image,omitempty"`

	// BuiltFrom is a digest of the spec the template was built from (all
	// but deletionProtection and the ResourceSpec fields): a later change
	// of it needs a new template and is reported.
	// +optional
	BuiltFrom string `json:"builtFrom,omitempty"`

	// LastTask is the last Proxmox VE task started for this template.
	// +optional
	LastTask *TaskStatus `json:"lastTask,omitempty"`

	// Adoption records that this resource adopted an existing guest
	// (one marked by the same kind, namespace and name) instead of creating
	// one.
	// +optional
	Adoption *AdoptionStatus `json:"adoption,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=vmt,categories={crossplane,managed,proxmox}
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="VMID",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".spec.node"
// +kubebuilder:printcolumn:name="IMAGE",type="string",JSONPath=".spec.imageConfig.filename"
// +kubebuilder:printcolumn:name="STEP",type="string",JSONPath=".status.step"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="NEXT-CHECK",type="string",JSONPath=".status.nextCheckTime",priority=1
// +crossplane:generate:methods=false

// A VirtualMachineTemplate is a Proxmox VE template VM built from a cloud
// image: the image is downloaded, imported as the VM's disk, cloud-init is
// configured and the VM converted to a template. Its external name is the
// VMID.
type VirtualMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VirtualMachineTemplateSpec   `json:"spec"`
	Status VirtualMachineTemplateStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true
// +crossplane:generate:methods=false

// VirtualMachineTemplateList contains a list of VirtualMachineTemplate.
type VirtualMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineTemplate `json:"items"`
}
