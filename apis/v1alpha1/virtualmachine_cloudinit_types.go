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

// The cloud-init part of a VirtualMachine's spec (also used by VirtualMachineTemplate):
// kubemox's IP configuration and Proxmox VE's cicustom snippets.

// IPConfig is kubemox's IP configuration of the first network interface
// (ipconfig0).
type IPConfig struct {
	// IP is the IPv4 address, or dhcp.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	IP string `json:"ip,omitempty"`

	// CIDR is the IPv4 prefix length (for example 24).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	CIDR string `json:"cidr,omitempty"`

	// Gateway is the IPv4 gateway.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Gateway string `json:"gateway,omitempty"`

	// IPv6 is the IPv6 address with prefix length, dhcp or auto.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	IPv6 string `json:"ipv6,omitempty"`

	// GatewayIPv6 is the IPv6 gateway.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	GatewayIPv6 string `json:"gatewayIPv6,omitempty"`
}

// IPv4Config is the IPv4 configuration of one network interface.
type IPv4Config struct {
	// Address in CIDR notation (192.0.2.10/24), or dhcp.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == 'dhcp' || (isCIDR(self) && cidr(self).ip().family() == 4)",message="ipv4.address must be an IPv4 address in CIDR notation (192.0.2.10/24) or dhcp"
	Address string `json:"address"`

	// Gateway is the IPv4 gateway.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 4",message="ipv4.gateway must be an IPv4 address"
	// +optional
	Gateway string `json:"gateway,omitempty"`
}

// IPv6Config is the IPv6 configuration of one network interface.
type IPv6Config struct {
	// Address in CIDR notation (2001:db8::10/64), dhcp, or auto (SLAAC).
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == 'dhcp' || self == 'auto' || (isCIDR(self) && cidr(self).ip().family() == 6)",message="ipv6.address must be an IPv6 address in CIDR notation (2001:db8::10/64), dhcp or auto"
	Address string `json:"address"`

	// Gateway is the IPv6 gateway.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 6",message="ipv6.gateway must be an IPv6 address"
	// +optional
	Gateway string `json:"gateway,omitempty"`
}

// NICIPConfig is the IP configuration of one network interface
// (ipconfigN, N being the position in the list).
type NICIPConfig struct {
	// IPv4 configuration.
	// +optional
	IPv4 *IPv4Config `json:"ipv4,omitempty"`

	// IPv6 configuration.
	// +optional
	IPv6 *IPv6Config `json:"ipv6,omitempty"`
}

// CloudInitCustom names cloud-init snippets (Proxmox VE volume IDs such as
// local:snippets/user.yaml) that replace the generated sections (cicustom).
type CloudInitCustom struct {
	// UserData snippet (cicustom user=).
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	UserData string `json:"userData,omitempty"`

	// MetaData snippet (cicustom meta=).
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	MetaData string `json:"metaData,omitempty"`

	// NetworkData snippet (cicustom network=).
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	NetworkData string `json:"networkData,omitempty"`

	// VendorData snippet (cicustom vendor=).
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	VendorData string `json:"vendorData,omitempty"`
}

// CloudInitConfig configures Proxmox VE's cloud-init drive (kubemox's field
// names).
// +kubebuilder:validation:XValidation:rule="!(has(self.password) && has(self.passwordFrom))",message="cloudInitConfig.password and cloudInitConfig.passwordFrom are mutually exclusive: set only one of them"
// +kubebuilder:validation:XValidation:rule="!(has(self.ipConfig) && has(self.ipConfigs))",message="cloudInitConfig.ipConfig and cloudInitConfig.ipConfigs are mutually exclusive: use ipConfigs for more than one interface"
type CloudInitConfig struct {
	// User is the default user's name (ciuser).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	User string `json:"user,omitempty"`

	// Password of User, inline (cipassword). Prefer passwordFrom.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Password string `json:"password,omitempty"`

	// PasswordFrom reads the password of User from a key of a Secret in the
	// VirtualMachine's namespace.
	// +optional
	PasswordFrom *OptionalSecretKeySelector `json:"passwordFrom,omitempty"`

	// SSHKeys are public keys in OpenSSH format (sshkeys).
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=16384
	// +optional
	SSHKeys []string `json:"sshKeys,omitempty"`

	// DNSDomain is the DNS search domain (searchdomain).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	DNSDomain string `json:"dnsDomain,omitempty"`

	// DNSServers are the DNS servers (nameserver).
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=64
	// +optional
	DNSServers []string `json:"dnsServers,omitempty"`

	// UpgradePackages upgrades packages on first boot (ciupgrade). Defaults
	// to true, as kubemox; an explicit false stays false.
	// +kubebuilder:default=true
	// +optional
	UpgradePackages *bool `json:"upgradePackages,omitempty"`

	// IPConfig is kubemox's IP configuration of the first interface
	// (ipconfig0).
	// +optional
	IPConfig *IPConfig `json:"ipConfig,omitempty"`

	// IPConfigs is the IP configuration per interface: the first entry is
	// ipconfig0 (net0), the second ipconfig1, and so on.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	IPConfigs []NICIPConfig `json:"ipConfigs,omitempty"`

	// Custom replaces generated cloud-init sections with snippets.
	// +optional
	Custom *CloudInitCustom `json:"custom,omitempty"`
}
