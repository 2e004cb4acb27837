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

// ContainerDisk is the root filesystem (the first entry of template.disk) or
// a mount point (every later entry, which names its path).
type ContainerDisk struct {
	// Storage is the Proxmox VE storage the volume lives on (for example
	// local-lvm). It must hold container directories (content rootdir).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Storage string `json:"storage"`

	// Size of the volume in GiB (PVE's "G" in size=). Volumes only grow: a smaller size than the
	// current one is reported, never applied.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=131072
	Size int32 `json:"size"`

	// Type is kubemox's free-form disk type; Proxmox VE has none for
	// container volumes, so it is accepted and not used.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Type string `json:"type,omitempty"`

	// Path is where a mount point appears inside the container (for example
	// /srv/data): mp0 is the second entry, mp1 the third, and so on. The
	// first entry is the root filesystem and has no path.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/') && self != '/'",message="disk path must be an absolute path inside the container other than /"
	// +optional
	Path string `json:"path,omitempty"`
}

// ContainerNetwork is one network interface of a container (net0, net1, ...
// in list order). Options the spec does not name (the MAC address, the
// firewall flag) are kept as Proxmox VE has them.
// +kubebuilder:validation:XValidation:rule="!has(self.gw) || (has(self.ip) && self.ip != 'dhcp' && self.ip != 'manual')",message="network gw needs a static ip"
// +kubebuilder:validation:XValidation:rule="!has(self.gw6) || (has(self.ip6) && self.ip6.contains('/'))",message="network gw6 needs a static ip6"
type ContainerNetwork struct {
	// Model is kubemox's field. Containers always get a veth pair, so any
	// value is accepted and not used.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Model string `json:"model,omitempty"`

	// Bridge the interface is attached to. Defaults to vmbr0, the bridge
	// kubemox attaches a container's interface to when none is named.
	// +kubebuilder:default=vmbr0
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Bridge string `json:"bridge,omitempty"`

	// Name of the interface inside the container (default eth0 for the
	// first, eth1 for the second, ...).
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z][a-zA-Z0-9_.-]*$')",message="network name must be an interface name such as eth0"
	// +optional
	Name string `json:"name,omitempty"`

	// VLAN tag of the interface.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	// +optional
	VLAN int32 `json:"vlan,omitempty"`

	// IP is the IPv4 address in CIDR notation (192.0.2.10/24), dhcp, or
	// manual (configured inside the container).
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == 'dhcp' || self == 'manual' || (isCIDR(self) && cidr(self).ip().family() == 4)",message="network ip must be an IPv4 address in CIDR notation (192.0.2.10/24), dhcp or manual"
	// +optional
	IP string `json:"ip,omitempty"`

	// GW is the IPv4 gateway.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 4",message="network gw must be an IPv4 address"
	// +optional
	GW string `json:"gw,omitempty"`

	// IP6 is the IPv6 address in CIDR notation (2001:db8::10/64), dhcp,
	// auto (SLAAC) or manual.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == 'dhcp' || self == 'auto' || self == 'manual' || (isCIDR(self) && cidr(self).ip().family() == 6)",message="network ip6 must be an IPv6 address in CIDR notation (2001:db8::10/64), dhcp, auto or manual"
	// +optional
	IP6 string `json:"ip6,omitempty"`

	// GW6 is the IPv6 gateway.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 6",message="network gw6 must be an IPv6 address"
	// +optional
	GW6 string `json:"gw6,omitempty"`
}

// ContainerImage is an OCI image pulled into file-based storage with Proxmox
// VE 9's oci-registry-pull, then used as the container's template.
type ContainerImage struct {
	// Reference of the image with its tag (for example
	// docker.io/library/nginx:1.27). Changing it replaces the container.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:[.](?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*)*:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}$')",message="image reference must be an OCI reference with a tag, such as docker.io/library/nginx:1.27"
	Reference string `json:"reference"`

	// Storage the image is pulled into: file-based, holding container
	// templates (content vztmpl).
	// +kubebuilder:default=local
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Storage string `json:"storage,omitempty"`
}

// ContainerFeatures are the advanced features a container may use.
type ContainerFeatures struct {
	// Nesting allows nested containers (and systemd's sandboxing).
	// +optional
	Nesting bool `json:"nesting,omitempty"`

	// Keyctl allows the keyctl() system call (unprivileged containers only;
	// Docker inside a container needs it).
	// +optional
	Keyctl bool `json:"keyctl,omitempty"`

	// Fuse allows FUSE file systems.
	// +optional
	Fuse bool `json:"fuse,omitempty"`
}

// ContainerTemplate is where the container comes from and its hardware
// (kubemox's spec.template). Exactly one source: name, image or
// ostemplate.
// +kubebuilder:validation:XValidation:rule="(has(self.name) ? 1 : 0) + (has(self.image) ? 1 : 0) + (has(self.ostemplate) ? 1 : 0) <= 1",message="template.name, template.image and template.ostemplate are mutually exclusive: set exactly one source"
// +kubebuilder:validation:XValidation:rule="!has(self.fullClone) || has(self.name)",message="template.fullClone applies only to a clone (template.name)"
// +kubebuilder:validation:XValidation:rule="!has(self.name) || !(has(self.password) || has(self.passwordFrom) || has(self.sshKeys) || has(self.unprivileged))",message="template.password, template.passwordFrom, template.sshKeys and template.unprivileged are set when a container is created, and cannot be with template.name (a clone takes them from its template)"
// +kubebuilder:validation:XValidation:rule="!(has(self.password) && has(self.passwordFrom))",message="template.password and template.passwordFrom are mutually exclusive: set only one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.disk) || size(self.disk) == 0 || !has(self.disk[0].path)",message="template.disk[0] is the root filesystem and has no path"
// +kubebuilder:validation:XValidation:rule="!has(self.disk) || self.disk.all(d, d == self.disk[0] || has(d.path))",message="template.disk entries after the first are mount points and need a path"
type ContainerTemplate struct {
	// Name of a container template to clone (kubemox's source), on nodeName
	// or on shared storage.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Name string `json:"name,omitempty"`

	// FullClone makes an independent copy of the template's volumes (the
	// default). false makes a linked clone.
	// +optional
	FullClone *bool `json:"fullClone,omitempty"`

	// Image creates the container from an OCI image. Changing the reference
	// replaces the container (unless deletionProtection is set).
	// +optional
	Image *ContainerImage `json:"image,omitempty"`

	// OSTemplate creates the container from a template archive volume (for
	// example local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst).
	// Changing it replaces the container (unless deletionProtection is set).
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z][a-zA-Z0-9._-]*:.+$')",message="template.ostemplate must be a volume ID such as local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
	// +optional
	OSTemplate string `json:"ostemplate,omitempty"`

	// Cores is the number of CPU cores (Proxmox VE's cores).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=8192
	// +optional
	Cores int32 `json:"cores,omitempty"`

	// Memory is the container's memory in MiB (Proxmox VE's memory).
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=4194304
	// +optional
	Memory int64 `json:"memory,omitempty"`

	// Swap is the container's swap in MiB (Proxmox VE's swap; 0 disables
	// swap).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4194304
	// +optional
	Swap *int64 `json:"swap,omitempty"`

	// Disk lists the root filesystem first, then mount points (mp0, mp1,
	// ... in list order). Volumes not listed are left alone.
	// +kubebuilder:validation:MaxItems=257
	// +kubebuilder:validation:XValidation:rule="self.all(d, !has(d.path) || self.exists_one(e, has(e.path) && e.path == d.path))",message="template.disk paths must be unique"
	// +optional
	Disk []ContainerDisk `json:"disk,omitempty"`

	// Network lists the network interfaces, net0 first.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Network []ContainerNetwork `json:"network,omitempty"`

	// Unprivileged runs the container as an unprivileged user: true unless
	// set false, as Proxmox VE's web UI does. Set at creation only.
	// +optional
	Unprivileged *bool `json:"unprivileged,omitempty"`

	// Features are the advanced features the container may use.
	// +optional
	Features *ContainerFeatures `json:"features,omitempty"`

	// Password of root, inline. Set at creation only: Proxmox VE's API
	// cannot change it afterwards. Prefer passwordFrom.
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Password string `json:"password,omitempty"`

	// PasswordFrom reads root's password from a key of a Secret in the
	// Container's namespace. Set at creation only.
	// +optional
	PasswordFrom *LocalSecretKeySelector `json:"passwordFrom,omitempty"`

	// SSHKeys are public keys in OpenSSH format installed for root at
	// creation.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=16384
	// +optional
	SSHKeys []string `json:"sshKeys,omitempty"`
}

// ContainerSpec is the desired state of a Container, with kubemox's names
// directly under spec.
//
// +kubebuilder:validation:XValidation:rule="has(self.template) || (has(self.managementPolicies) && !self.managementPolicies.exists(p, p == '*' || p == 'Create'))",message="template is required when managementPolicies allow Create (an import without one: [\"Observe\"], or [\"Observe\", \"Update\", \"LateInitialize\"] to manage it)"
// +kubebuilder:validation:XValidation:rule="(has(self.template) && (has(self.template.name) || has(self.template.image) || has(self.template.ostemplate))) || (has(self.managementPolicies) && !self.managementPolicies.exists(p, p == '*' || p == 'Create'))",message="one of template.name, template.image or template.ostemplate is required when managementPolicies allow Create (an imported container has no source: [\"Observe\"], or [\"Observe\", \"Update\", \"LateInitialize\"] to manage it)"
// +kubebuilder:validation:XValidation:rule="has(self.name) || (has(self.managementPolicies) && self.managementPolicies == ['Observe'])",message="name is required, unless managementPolicies is [\"Observe\"] (import)"
// +kubebuilder:validation:XValidation:rule="has(self.nodeName) || has(self.placement) || (has(self.managementPolicies) && self.managementPolicies == ['Observe'])",message="nodeName or placement is required, unless managementPolicies is [\"Observe\"] (import)"
// +kubebuilder:validation:XValidation:rule="!has(self.ha) || !has(self.powerState) || (self.powerState == 'Running' ? (!has(self.ha.state) || self.ha.state == 'started' || self.ha.state == 'ignored') : (has(self.ha.state) && self.ha.state != 'started'))",message="powerState must agree with ha.state, which decides the power of an HA resource: Running needs ha.state started (or ignored), Stopped needs stopped, disabled or ignored"
type ContainerSpec struct {
	// The connection, management policies and connection-detail Secret
	// (vmid, node, ipAddress and the root password, when one is set, are
	// written to it).
	ResourceSpec `json:",inline"`

	// Name is the container's hostname (a DNS name).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?[.])*[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$')",message="name must be a DNS name: letters, digits, hyphens and dots, as Proxmox VE requires of a hostname"
	// +optional
	Name string `json:"name,omitempty"`

	// NodeName is the Proxmox VE node the container is created on. A
	// container migrated to another node is followed there, not recreated;
	// changing nodeName migrates it (see migrationPolicy).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// Placement lets the provider pick the node when nodeName is empty:
	// the allowed online node with the most free memory that the template
	// can be cloned to. The choice is kept in status.placement.
	// +optional
	Placement *GuestPlacementSpec `json:"placement,omitempty"`

	// Template is the source and the hardware.
	// +optional
	Template *ContainerTemplate `json:"template,omitempty"`

	// DeletionProtection keeps the Proxmox container when this resource is
	// deleted, and blocks its replacement when the source changes.
	// +kubebuilder:default=false
	// +optional
	DeletionProtection bool `json:"deletionProtection,omitempty"`

	// EnableAutoStart starts the container whenever it is found stopped.
	// Defaults to true; an explicit false stays false. powerState, when set,
	// rules instead.
	// +kubebuilder:default=true
	// +optional
	EnableAutoStart *bool `json:"enableAutoStart,omitempty"`

	// Tags of the container in Proxmox VE (PVE's tags), compared as a set.
	// Unset leaves them as they are.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z0-9_][a-zA-Z0-9_+.-]*$`
	// +optional
	Tags []string `json:"tags,omitempty"`

	// OnBoot starts the container when its node boots (PVE's onboot;
	// Proxmox VE's default is false). Unset leaves it as it is.
	// +optional
	OnBoot *bool `json:"onboot,omitempty"`

	// Nameserver lists the DNS servers the container uses (PVE's
	// nameserver; unset takes the host's). A change applies at the next
	// start.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=64
	// +optional
	Nameserver []string `json:"nameserver,omitempty"`

	// Searchdomain lists the DNS search domains (PVE's searchdomain; unset
	// takes the host's). A change applies at the next start.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	Searchdomain []string `json:"searchdomain,omitempty"`

	// The desired power state (powerState, shutdownTimeoutSeconds).
	GuestPower `json:",inline"`

	// HA makes the container a Proxmox VE HA resource, kept as written here and
	// removed before the container is deleted. While ha.state is not ignored, HA
	// decides the power state (powerState, if set, must agree).
	// +optional
	HA *GuestHA `json:"ha,omitempty"`

	// How a change of nodeName moves the container (migrationPolicy). PVE
	// has no live migration for containers: Live moves a running container
	// with a restart migration (shut down, moved, started on the target,
	// within shutdownTimeoutSeconds), a stopped one offline.
	GuestMigration `json:",inline"`

	// RebootPolicy says whether the container may be restarted to apply
	// changes Proxmox VE leaves pending: Always (the default) or Never (the
	// pending keys are shown in status.pendingChanges instead).
	// +kubebuilder:default=Always
	// +optional
	RebootPolicy RebootPolicy `json:"rebootPolicy,omitempty"`

	// AdditionalConfig sets raw Proxmox VE configuration keys of the
	// container (for example onboot: "1"). Only the keys listed are managed.
	// +kubebuilder:validation:MaxProperties=128
	// +optional
	AdditionalConfig map[string]string `json:"additionalConfig,omitempty"`
}

// ContainerSource is the source a container was created from, recorded so a
// changed image reference or ostemplate is recognised as a replacement.
type ContainerSource struct {
	// OSTemplate the container was created from.
	// +optional
	OSTemplate string `json:"ostemplate,omitempty"`

	// ImageReference the container's template was pulled from.
	// +optional
	ImageReference string `json:"imageReference,omitempty"`
}

// ContainerStatus is the observed state of a Container.
type ContainerStatus struct {
	// Conditions (Ready, Synced) and the observed generation.
	xpv2.ManagedResourceStatus `json:",inline"`
	PollStatus                 `json:",inline"`

	// Status is kubemox's observed view of the container (its field names
	// are those of VirtualMachine's).
	// +optional
	Status QEMUStatus `json:"status,omitempty"`

	// VMID of the container once the provider has seen this resource's own
	// marker in its description; never given up afterwards.
	// +optional
	VMID int32 `json:"vmid,omitempty"`

	// IPAddresses are the addresses of the container's interfaces
	// (loopback and link-local left out), from Proxmox VE's interfaces
	// list.
	// +optional
	IPAddresses []string `json:"ipAddresses,omitempty"`

	// PendingChanges are configuration keys Proxmox VE holds pending until
	// the container restarts.
	// +optional
	PendingChanges []string `json:"pendingChanges,omitempty"`

	// Where the spec last asked the container to be, and the last
	// migration (requestedNode, lastMigration).
	GuestPlacement `json:",inline"`

	// HA is the container's HA resource as last observed (set while spec.ha is).
	// +optional
	HA *GuestHAStatus `json:"ha,omitempty"`

	// LastTask is the last Proxmox VE task started for this container.
	// +optional
	LastTask *TaskStatus `json:"lastTask,omitempty"`

	// Adoption records that this resource adopted an existing guest
	// (one marked by the same kind, namespace and name) instead of creating
	// one.
	// +optional
	Adoption *AdoptionStatus `json:"adoption,omitempty"`

	// Source is what the container was created from.
	// +optional
	Source *ContainerSource `json:"source,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=lxc,categories={crossplane,managed,proxmox}
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

// A Container is a Proxmox VE LXC container, cloned from a container
// template or created from a template archive or an OCI image. Its external
// name is the VMID.
type Container struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ContainerSpec   `json:"spec"`
	Status ContainerStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true
// +crossplane:generate:methods=false

// ContainerList contains a list of Container.
type ContainerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Container `json:"items"`
}
