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

// RebootPolicy says whether the provider may reboot a VM to apply changes
// Proxmox VE leaves pending (hardware changes, cloud-init on a running VM).
// +kubebuilder:validation:Enum=Always;Never
type RebootPolicy string

// Reboot policies.
const (
	// RebootPolicyAlways reboots the VM once, with an event, when changes are
	// pending. This is kubemox's behaviour and the default.
	RebootPolicyAlways RebootPolicy = "Always"
	// RebootPolicyNever never reboots; the pending keys are reported in
	// status.pendingChanges until the VM is restarted by someone else.
	RebootPolicyNever RebootPolicy = "Never"
)

// PCIDeviceType is how a PCI device is named to Proxmox VE.
// +kubebuilder:validation:Enum=raw;mapped
type PCIDeviceType string

// PCI device types.
const (
	// PCIDeviceTypeRaw passes a host PCI address (hostpciN: host=...).
	PCIDeviceTypeRaw PCIDeviceType = "raw"
	// PCIDeviceTypeMapped passes a cluster resource mapping
	// (hostpciN: mapping=...).
	PCIDeviceTypeMapped PCIDeviceType = "mapped"
)

// ConnectionReference names a ProxmoxConnection (kubemox's connectionRef).
type ConnectionReference struct {
	// Name of the ProxmoxConnection.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// VirtualMachineDisk is one disk of a VM.
type VirtualMachineDisk struct {
	// Storage is the Proxmox VE storage the disk lives on (for example
	// local-lvm).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Storage string `json:"storage"`

	// Size of the disk in GiB (PVE's "G" in size=). Disks only grow: a smaller size
	// than the current one is refused by the controller, never applied.
	// No maximum, as kubemox and Proxmox VE's API (the storage refuses
	// what it cannot allocate, with its message).
	// +kubebuilder:validation:Minimum=1
	Size int32 `json:"size"`

	// Device is the bus and slot Proxmox VE attaches the disk to:
	// scsi0-scsi30, virtio0-virtio15, sata0-sata5 or ide0-ide3.
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^(scsi([0-9]|[12][0-9]|30)|virtio([0-9]|1[0-5])|sata[0-5]|ide[0-3])$')",message="device must be one of scsi0-scsi30, virtio0-virtio15, sata0-sata5, ide0-ide3"
	Device string `json:"device"`
}

// VirtualMachineNetwork is one network interface of a VM. Interfaces map to
// net0, net1, ... in list order; options the spec does not name (the MAC
// address, firewall, tag) are kept as Proxmox VE has them.
type VirtualMachineNetwork struct {
	// Model of the network card (for example virtio, e1000, vmxnet3).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Model string `json:"model"`

	// Bridge the interface is attached to (for example vmbr0).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Bridge string `json:"bridge"`

	// Tag is the VLAN tag of the interface's traffic (PVE's tag); unset
	// leaves the tag as Proxmox VE has it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	// +optional
	Tag int32 `json:"tag,omitempty"`

	// Firewall applies the VM's firewall rules to the interface (PVE's
	// firewall; Proxmox VE's default is false). Unset leaves it as it is.
	// +optional
	Firewall *bool `json:"firewall,omitempty"`

	// MACAddr is the interface's MAC address (PVE's macaddr); unset keeps
	// the address Proxmox VE assigned.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$`
	// +optional
	MACAddr string `json:"macaddr,omitempty"`

	// MTU of the interface in bytes (PVE's mtu; 1 takes the bridge's MTU).
	// Unset leaves it as it is.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65520
	// +optional
	MTU int32 `json:"mtu,omitempty"`
}

// PCIDevice is a PCI device passed through to a VM (hostpci0, hostpci1, ...
// in list order).
// +kubebuilder:validation:XValidation:rule="!(self.type == 'mapped' && has(self.pcie) && self.pcie)",message="pcie must not be set on a PCI device of type mapped"
type PCIDevice struct {
	// Type is raw (deviceID is a host PCI address such as 0000:01:00.0) or
	// mapped (deviceID is the name of a cluster resource mapping).
	Type PCIDeviceType `json:"type"`

	// DeviceID is the host PCI address (raw) or the mapping name (mapped).
	// +kubebuilder:validation:MaxLength=128
	// +optional
	DeviceID string `json:"deviceID,omitempty"`

	// PrimaryGPU marks the device as the VM's primary GPU (x-vga=1).
	// +kubebuilder:default=false
	// +optional
	PrimaryGPU bool `json:"primaryGPU,omitempty"`

	// PCIE attaches the device to a PCIe port (pcie=1, q35 machines only).
	// +kubebuilder:default=false
	// +optional
	PCIE bool `json:"pcie,omitempty"`
}

// VirtualMachineHardware is the hardware shared by clone and scratch mode.
// A field left out is left as Proxmox VE (or the template) has it.
type VirtualMachineHardware struct {
	// Cores is the number of CPU cores per socket (Proxmox VE's cores).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=512
	// +optional
	Cores int32 `json:"cores,omitempty"`

	// Socket is the number of CPU sockets (Proxmox VE's sockets; kubemox
	// names the field socket). No maximum, as kubemox and
	// Proxmox VE's schema (qemu-server's sockets has only minimum 1); a VM
	// with more vCPUs than its node has fails to start, with PVE's message.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Socket int32 `json:"socket,omitempty"`

	// Memory is the guest's memory in MiB (Proxmox VE's memory).
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=4194304
	// +optional
	Memory int64 `json:"memory,omitempty"`

	// CPU is the emulated CPU type (PVE's cpu, for example host or
	// x86-64-v2-AES; Proxmox VE's default is kvm64). A change applies at the
	// next boot. Unset leaves it as it is.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	CPU string `json:"cpu,omitempty"`

	// NUMA enables NUMA (PVE's numa; Proxmox VE's default is false). A
	// change applies at the next boot. Unset leaves it as it is.
	// +optional
	NUMA *bool `json:"numa,omitempty"`

	// Balloon is the memory target of the balloon device in MiB (PVE's
	// balloon); 0 disables ballooning. Unset leaves it as it is.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4194304
	// +optional
	Balloon *int64 `json:"balloon,omitempty"`

	// Disk lists the disks the spec manages; each device may appear once.
	// Disks not listed are left alone.
	// +kubebuilder:validation:MaxItems=56
	// +kubebuilder:validation:XValidation:rule="self.all(d, self.exists_one(e, e.device == d.device))",message="disk devices must be unique: each device may appear once"
	// +optional
	Disk []VirtualMachineDisk `json:"disk,omitempty"`

	// Network lists the network interfaces, net0 first.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Network []VirtualMachineNetwork `json:"network,omitempty"`

	// PCIDevices lists PCI devices passed through, hostpci0 first.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	PCIDevices []PCIDevice `json:"pciDevices,omitempty"`
}

// VirtualMachineCloneSpec creates the VM by cloning a template (kubemox's
// spec.template). Without a name there is nothing to clone: the VM is
// created from scratch with this hardware, and an event says so.
// +kubebuilder:validation:XValidation:rule="!(has(self.name) && size(self.name) > 0 && has(self.templateRef))",message="template.name and template.templateRef are mutually exclusive: name a Proxmox template or a VirtualMachineTemplate, not both"
type VirtualMachineCloneSpec struct {
	// Name of the template VM to clone, on nodeName or on shared storage.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Name string `json:"name,omitempty"`

	// TemplateRef clones the template a VirtualMachineTemplate in this
	// namespace built (once it is built).
	// +optional
	TemplateRef *TemplateReference `json:"templateRef,omitempty"`

	VirtualMachineHardware `json:",inline"`

	// FullClone makes an independent copy of the template's disks (the
	// default, as kubemox). false makes a linked clone, which needs a template
	// on storage that supports it.
	// +kubebuilder:default=true
	// +optional
	FullClone *bool `json:"fullClone,omitempty"`

	// CloudInitConfig configures cloud-init on the clone.
	// +optional
	CloudInitConfig *CloudInitConfig `json:"cloudInitConfig,omitempty"`
}

// TemplateReference names a VirtualMachineTemplate in the same namespace.
type TemplateReference struct {
	// Name of the VirtualMachineTemplate.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// OSImage attaches an installation or cloud image to a VM created from
// scratch.
type OSImage struct {
	// Name is the device the image is attached to (for example ide2).
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Name string `json:"name,omitempty"`

	// Value is the Proxmox VE volume (for example
	// local:iso/ubuntu-24.04-live-server-amd64.iso).
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Value string `json:"value,omitempty"`
}

// VirtualMachineScratchSpec creates the VM from scratch (kubemox's
// spec.vmSpec).
type VirtualMachineScratchSpec struct {
	VirtualMachineHardware `json:",inline"`

	// OSImage is an installation or cloud image to attach.
	// +optional
	OSImage *OSImage `json:"osImage,omitempty"`

	// CloudInitConfig configures cloud-init on the new VM.
	// +optional
	CloudInitConfig *CloudInitConfig `json:"cloudInitConfig,omitempty"`
}

// VirtualMachineSpec is the desired state of a VirtualMachine. The Proxmox
// parameters sit directly under spec, with kubemox's names, so kubemox
// manifests apply unchanged.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.template) && has(self.vmSpec))",message="template and vmSpec are mutually exclusive: set template to clone, or vmSpec to create from scratch"
// +kubebuilder:validation:XValidation:rule="has(self.template) || has(self.vmSpec) || (has(self.managementPolicies) && self.managementPolicies == ['Observe'])",message="one of template or vmSpec is required, unless managementPolicies is [\"Observe\"] (import)"
// +kubebuilder:validation:XValidation:rule="has(self.name) || (has(self.managementPolicies) && self.managementPolicies == ['Observe'])",message="name is required, unless managementPolicies is [\"Observe\"] (import)"
// +kubebuilder:validation:XValidation:rule="has(self.nodeName) || has(self.placement) || (has(self.managementPolicies) && self.managementPolicies == ['Observe'])",message="nodeName or placement is required, unless managementPolicies is [\"Observe\"] (import)"
// +kubebuilder:validation:XValidation:rule="!has(self.cloudInitConfig) || !((has(self.template) && has(self.template.cloudInitConfig)) || (has(self.vmSpec) && has(self.vmSpec.cloudInitConfig)))",message="cloudInitConfig may be set in one place only: spec.cloudInitConfig, spec.template.cloudInitConfig or spec.vmSpec.cloudInitConfig"
// +kubebuilder:validation:XValidation:rule="!has(self.ha) || !has(self.powerState) || (self.powerState == 'Running' ? (!has(self.ha.state) || self.ha.state == 'started' || self.ha.state == 'ignored') : (has(self.ha.state) && self.ha.state != 'started'))",message="powerState must agree with ha.state, which decides the power of an HA resource: Running needs ha.state started (or ignored), Stopped needs stopped, disabled or ignored"
type VirtualMachineSpec struct {
	// The connection, management policies and connection-detail Secret
	// (vmid, node, name, ipAddress, endpoint, cloud-init username and
	// password are written to it).
	ResourceSpec `json:",inline"`

	// Name of the VM in Proxmox VE (a DNS name).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?[.])*[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$')",message="name must be a DNS name: letters, digits, hyphens and dots, as Proxmox VE requires"
	// +optional
	Name string `json:"name,omitempty"`

	// Tags of the VM in Proxmox VE (PVE's tags), compared as a set. Unset
	// leaves them as they are.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z0-9_][a-zA-Z0-9_+.-]*$`
	// +optional
	Tags []string `json:"tags,omitempty"`

	// OnBoot starts the VM when its node boots (PVE's onboot; Proxmox VE's
	// default is false). Unset leaves it as it is.
	// +optional
	OnBoot *bool `json:"onboot,omitempty"`

	// NodeName is the Proxmox VE node the VM is created on. A VM migrated to
	// another node is followed there, not recreated.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// Placement lets the provider pick the node when nodeName is empty:
	// the allowed online node with the most free memory that the template
	// can be cloned to. The choice is kept in status.placement.
	// +optional
	Placement *GuestPlacementSpec `json:"placement,omitempty"`

	// Template clones the VM from a template (clone mode).
	// +optional
	Template *VirtualMachineCloneSpec `json:"template,omitempty"`

	// VMSpec creates the VM from scratch (scratch mode).
	// +optional
	VMSpec *VirtualMachineScratchSpec `json:"vmSpec,omitempty"`

	// CloudInitConfig is accepted here too, where kubemox's examples put it;
	// it means the same as template.cloudInitConfig or vmSpec.cloudInitConfig
	// and may be set in one place only.
	// +optional
	CloudInitConfig *CloudInitConfig `json:"cloudInitConfig,omitempty"`

	// DeletionProtection keeps the Proxmox VM when this resource is deleted.
	// +kubebuilder:default=false
	// +optional
	DeletionProtection bool `json:"deletionProtection,omitempty"`

	// EnableAutoStart starts the VM whenever it is found stopped. Defaults to
	// true; an explicit false stays false. powerState, when set, rules
	// instead.
	// +kubebuilder:default=true
	// +optional
	EnableAutoStart *bool `json:"enableAutoStart,omitempty"`

	// The desired power state (powerState, shutdownTimeoutSeconds).
	GuestPower `json:",inline"`

	// HA makes the VM a Proxmox VE HA resource, kept as written here and
	// removed before the VM is deleted. While ha.state is not ignored, HA
	// decides the power state (powerState, if set, must agree).
	// +optional
	HA *GuestHA `json:"ha,omitempty"`

	// How a change of nodeName moves the VM (migrationPolicy).
	GuestMigration `json:",inline"`

	// RebootPolicy says whether the VM may be rebooted to apply changes
	// Proxmox VE leaves pending: Always (the default, as kubemox) or Never
	// (the pending keys are shown in status.pendingChanges instead).
	// +kubebuilder:default=Always
	// +optional
	RebootPolicy RebootPolicy `json:"rebootPolicy,omitempty"`

	// AdditionalConfig sets raw Proxmox VE configuration keys (for example
	// ostype: l26). Only the keys listed are managed.
	// +kubebuilder:validation:MaxProperties=128
	// +optional
	AdditionalConfig map[string]string `json:"additionalConfig,omitempty"`
}

// QEMUStatus is kubemox's observed view of the VM.
type QEMUStatus struct {
	// State is the power state (running, stopped, ...).
	// +optional
	State string `json:"state,omitempty"`

	// Node is the Proxmox VE node the VM runs on.
	// +optional
	Node string `json:"node,omitempty"`

	// Uptime of the VM.
	// +optional
	Uptime string `json:"uptime,omitempty"`

	// ID is the VMID.
	// +optional
	ID int32 `json:"id,omitempty"`

	// IPAddress is the first IPv4 address the guest agent reports.
	// +optional
	IPAddress string `json:"IPAddress,omitempty"`

	// OSInfo is the operating system the guest agent reports.
	// +optional
	OSInfo string `json:"OSInfo,omitempty"`
}

// TaskStatus is the last Proxmox VE task the provider started for this VM.
type TaskStatus struct {
	// UPID identifies the task.
	UPID string `json:"upid"`

	// Type of the task (qmclone, qmcreate, qmstart, qmshutdown, qmdestroy,
	// ...).
	// +optional
	Type string `json:"type,omitempty"`

	// Status is running or stopped.
	// +optional
	Status string `json:"status,omitempty"`

	// ExitStatus is OK, or Proxmox VE's error message once the task stopped.
	// +optional
	ExitStatus string `json:"exitStatus,omitempty"`
}

// CloudInitPasswordApplied records which version of the cloud-init password
// was last written to Proxmox VE (which always reads it back masked), so it
// is written again only when it changed. Never the password itself.
type CloudInitPasswordApplied struct {
	// Generation of the VirtualMachine when the password was applied.
	// +optional
	Generation int64 `json:"generation,omitempty"`

	// SecretResourceVersion of the passwordFrom Secret when it was read.
	// +optional
	SecretResourceVersion string `json:"secretResourceVersion,omitempty"`
}

// VirtualMachineStatus is the observed state of a VirtualMachine.
type VirtualMachineStatus struct {
	// Conditions (Ready, Synced) and the observed generation.
	xpv2.ManagedResourceStatus `json:",inline"`
	PollStatus                 `json:",inline"`

	// Status is kubemox's observed view of the VM.
	// +optional
	Status QEMUStatus `json:"status,omitempty"`

	// VMID of the VM once the provider has seen this resource's own marker
	// in that guest's description. From then on the VMID is never given up
	// (a vanished marker is an error, not a reason to create another VM).
	// The VMID picked for a create is stored earlier, in the external-name
	// annotation, before Proxmox VE is asked to create anything.
	// +optional
	VMID int32 `json:"vmid,omitempty"`

	// PendingChanges are configuration keys Proxmox VE holds pending until
	// the VM restarts (shown when rebootPolicy is Never, or while a reboot
	// is under way).
	// +optional
	PendingChanges []string `json:"pendingChanges,omitempty"`

	// Where the spec last asked the VM to be, and the last migration
	// (requestedNode, lastMigration).
	GuestPlacement `json:",inline"`

	// HA is the VM's HA resource as last observed (set while spec.ha is).
	// +optional
	HA *GuestHAStatus `json:"ha,omitempty"`

	// LastTask is the last Proxmox VE task started for this VM.
	// +optional
	LastTask *TaskStatus `json:"lastTask,omitempty"`

	// Adoption records that this resource adopted an existing guest
	// (one marked by the same kind, namespace and name) instead of creating
	// one.
	// +optional
	Adoption *AdoptionStatus `json:"adoption,omitempty"`

	// CloudInitPasswordApplied records which password version was last
	// written.
	// +optional
	CloudInitPasswordApplied *CloudInitPasswordApplied `json:"cloudInitPasswordApplied,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=vm,categories={crossplane,managed,proxmox}
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".status.status.node"
// +kubebuilder:printcolumn:name="STATE",type="string",JSONPath=".status.status.state"
// +kubebuilder:printcolumn:name="DESIRED",type="string",JSONPath=".spec.powerState"
// +kubebuilder:printcolumn:name="IP",type="string",JSONPath=".status.status.IPAddress"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="NEXT-CHECK",type="string",JSONPath=".status.nextCheckTime",priority=1
// +crossplane:generate:methods=false

// A VirtualMachine is a Proxmox VE QEMU virtual machine, cloned from a
// template or created from scratch. Its external name is the VMID.
type VirtualMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VirtualMachineSpec   `json:"spec"`
	Status VirtualMachineStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true
// +crossplane:generate:methods=false

// VirtualMachineList contains a list of VirtualMachine.
type VirtualMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachine `json:"items"`
}
