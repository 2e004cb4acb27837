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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// PCI device modes of a VirtualMachineSet.
const (
	// PCIModeShared gives every VM of the set all the devices.
	PCIModeShared = "shared"
	// PCIModeDedicated gives VM i device i; a VM beyond the list gets none.
	PCIModeDedicated = "dedicated"
)

// PCIDevicesSpec hands a set's PCI devices to its VMs (kubemox's field).
type PCIDevicesSpec struct {
	// Mode is shared (every VM gets every device) or dedicated (VM i gets
	// device i).
	// +kubebuilder:validation:Enum=shared;dedicated
	Mode string `json:"mode"`
	// Devices are the PCI devices.
	// +kubebuilder:validation:MaxItems=64
	Devices []PCIDevice `json:"devices"`
}

// VirtualMachineSetSpec is the desired state of a VirtualMachineSet: kubemox's
// fields, plus the management policies its VMs get.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.connectionRef) || has(self.connectionRef)",message="connectionRef is required once set"
// +kubebuilder:validation:XValidation:rule="has(self.nodeName) != has(self.placement)",message="exactly one of nodeName or placement is required"
type VirtualMachineSetSpec struct {
	// Replicas is the number of VMs, named <set>-0 to <set>-<replicas-1>.
	// No maximum, as kubemox: Proxmox VE refuses a VM only when it has no
	// VMID left to give.
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas"`

	// NodeName is the Proxmox VE node the VMs are created on. Either it or
	// placement is set.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// Placement picks each new VM's node among allowed ones when nodeName
	// is empty, spread across them with spread: Nodes. A VM's node is
	// decided once, when the set creates it, and written to its nodeName.
	// +optional
	Placement *SetPlacementSpec `json:"placement,omitempty"`

	// Template is each VM's template: the Proxmox template to clone, the
	// hardware and cloud-init, as a VirtualMachine's spec.template.
	// +optional
	Template VirtualMachineCloneSpec `json:"template,omitempty"`

	// AdditionalConfig sets raw Proxmox VE keys on every VM.
	// +optional
	AdditionalConfig map[string]string `json:"additionalConfig,omitempty"`

	// ConnectionRef names the ProxmoxConnection of the VMs; the connection
	// named "default" when omitted.
	// +optional
	ConnectionRef *ConnectionReference `json:"connectionRef,omitempty"`

	// PCIDevices hands PCI devices to the VMs, shared or one per VM.
	// +optional
	PCIDevices *PCIDevicesSpec `json:"pciDevices,omitempty"`

	// DeletionProtection keeps each VM in Proxmox VE when its resource is
	// deleted, and stops a scale-down at the first protected VM.
	// +kubebuilder:default=false
	// +optional
	DeletionProtection bool `json:"deletionProtection,omitempty"`

	// EnableAutoStart starts each VM whenever it is found stopped (default
	// true).
	// +kubebuilder:default=true
	// +optional
	EnableAutoStart *bool `json:"enableAutoStart,omitempty"`

	// ManagementPolicies of the VMs: ["Observe"] adopts existing VMs named
	// <set>-<i> without changing them (set each one's external name to its
	// VMID first), ["*"] manages them. kubemox's reconcile-mode annotation on
	// the set is passed on to the VMs too.
	// +kubebuilder:default={"*"}
	// +optional
	ManagementPolicies xpv2.ManagementPolicies `json:"managementPolicies,omitempty"`
}

// VirtualMachineSetStatus is the observed state of a VirtualMachineSet.
type VirtualMachineSetStatus struct {
	// Conditions: Ready (every replica exists and is Ready), and
	// ScaleDownBlocked, PCIDevicesShort or NodesSkipped (placement left out
	// an allowed node, offline say) when the spec cannot be fully met.
	xpv2.ConditionedStatus `json:",inline"`
	// Replicas is the number of VMs of the set that exist.
	// +optional
	Replicas int32 `json:"replicas"`
	// ReadyReplicas is the number of them that are Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`
	// Selector selects the set's VMs (for the scale subresource).
	// +optional
	Selector string `json:"selector,omitempty"`
	// ObservedGeneration is the generation last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:scope=Namespaced,shortName=vmset,categories={proxmox}
// +kubebuilder:printcolumn:name="REPLICAS",type="integer",JSONPath=".spec.replicas"
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.readyReplicas"
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".spec.nodeName"
// +kubebuilder:printcolumn:name="SPREAD",type="string",JSONPath=".spec.placement.spread",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"

// A VirtualMachineSet keeps a number of identical VirtualMachines, named
// <set>-0, <set>-1, ..., owned by the set.
type VirtualMachineSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VirtualMachineSetSpec   `json:"spec"`
	Status VirtualMachineSetStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// VirtualMachineSetList contains a list of VirtualMachineSet.
type VirtualMachineSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineSet `json:"items"`
}

// VirtualMachineSet type metadata.
var (
	VirtualMachineSetKind             = reflect.TypeFor[VirtualMachineSet]().Name()
	VirtualMachineSetGroupVersionKind = SchemeGroupVersion.WithKind(VirtualMachineSetKind)
)

func init() {
	SchemeBuilder.Register(&VirtualMachineSet{}, &VirtualMachineSetList{})
}
