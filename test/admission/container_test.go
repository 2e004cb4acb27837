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

package admission

import "testing"

// kubemoxContainer is a Container in kubemox's documented layout (kubectl
// applies it to the current namespace; the test uses default).
const kubemoxContainer = `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: Container
metadata:
  name: container-sample
spec:
  connectionRef:
    name: proxmox-connection-sample
  name: container-sample
  nodeName: lowtower
  deletionProtection: false
  enableAutoStart: true
  template:
    name: ubuntu-template
    cores: 2
    memory: 4096
    disk:
      - storage: local-lvm
        size: 50
        type: rootfs
    network:
      - model: virtio
        bridge: vmbr0
`

// ct wraps spec lines (indented by two spaces) into a Container manifest.
func ct(spec string) string {
	return `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: Container
metadata:
  name: ct-case
  namespace: default
spec:
` + spec
}

// ctHead is a valid spec header without a source; cases add template
// fields (indented by four spaces).
const ctHead = `
  name: ct-case
  nodeName: pve1
  template:
`

func TestContainerAdmission(t *testing.T) { runAdmission(t, containerCases()) }

// containerCases are Container manifests the API server accepts or refuses;
// the refused ones are also rows of the cross-kind bad-input table.
func containerCases() map[string]admissionCase {
	return map[string]admissionCase{
		// Accepted.
		"KubemoxClone": {manifest: kubemoxContainer},
		"OSTemplateEverything": {manifest: ct(`
  name: web.example.com
  nodeName: pve1
  providerConfigRef: {kind: ProxmoxConnection, name: conn}
  writeConnectionSecretToRef: {name: web-conn}
  rebootPolicy: Never
  migrationPolicy: Offline
  deletionProtection: true
  enableAutoStart: false
  additionalConfig: {onboot: "1"}
  template:
    ostemplate: local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst
    cores: 2
    memory: 1024
    swap: 0
    unprivileged: false
    features: {nesting: true, keyctl: true, fuse: true}
    passwordFrom: {name: root, key: password}
    sshKeys: ["ssh-ed25519 AAAAC3Nza... user@host"]
    disk:
    - {storage: local-lvm, size: 8}
    - {storage: local-lvm, size: 20, path: /srv/data}
    network:
    - {bridge: vmbr0, name: eth0, vlan: 20, ip: 192.0.2.10/24, gw: 192.0.2.1, ip6: "2001:db8::10/64", gw6: "2001:db8::1"}
    - {bridge: vmbr1, ip: dhcp, ip6: auto}
`)},
		"Image": {manifest: ct(ctHead + `
    image: {reference: "registry.example:5000/team/app:v1.2"}
    password: hunter22
`)},
		"Import": {manifest: ct(`
  managementPolicies: ["Observe"]
`)},
		"ImportManagedWithoutCreate": {manifest: ct(`
  name: ct-case
  nodeName: pve1
  managementPolicies: ["Observe", "Update", "LateInitialize"]
  template:
    cores: 2
    disk: [{storage: local-lvm, size: 8}]
`)},

		// Rejected: the source.
		"TwoSources": {manifest: ct(ctHead + `
    name: tpl
    ostemplate: local:vztmpl/debian.tar.zst
`), wantErr: []string{"template.name, template.image and template.ostemplate are mutually exclusive: set exactly one source"}},
		"NoSource": {manifest: ct(ctHead + `
    cores: 2
`), wantErr: []string{"one of template.name, template.image or template.ostemplate is required"}},
		"NoTemplate": {manifest: ct(`
  name: ct-case
  nodeName: pve1
`), wantErr: []string{"template is required when managementPolicies allow Create", "one of template.name, template.image or template.ostemplate is required"}},
		"ImportedWithCreate": {manifest: ct(`
  name: ct-case
  nodeName: pve1
  managementPolicies: ["Observe", "Create", "Update"]
  template: {cores: 2}
`), wantErr: []string{"one of template.name, template.image or template.ostemplate is required when managementPolicies allow Create"}},
		"NameMissing": {manifest: ct(`
  nodeName: pve1
  template: {ostemplate: "local:vztmpl/x.tar.zst"}
`), wantErr: []string{"name is required, unless managementPolicies is [\"Observe\"]"}},
		"NodeNameMissing": {manifest: ct(`
  name: ct-case
  template: {ostemplate: "local:vztmpl/x.tar.zst"}
`), wantErr: []string{"nodeName or placement is required, unless managementPolicies is [\"Observe\"]"}},
		"PlacementInsteadOfNodeName": {manifest: ct(`
  name: ct-case
  placement: {allowedNodes: [pve1]}
  template: {ostemplate: "local:vztmpl/x.tar.zst"}
`)},
		"PlacementNoNodes": {manifest: ct(`
  name: ct-case
  placement: {}
  template: {ostemplate: "local:vztmpl/x.tar.zst"}
`), wantErr: []string{"spec.placement.allowedNodes: Required value"}},
		"HostnameNotDNS": {manifest: ct(`
  name: not_a_host
  nodeName: pve1
  template: {ostemplate: "local:vztmpl/x.tar.zst"}
`), wantErr: []string{"spec.name", "name must be a DNS name"}},
		"OSTemplateNotVolID": {manifest: ct(ctHead + `
    ostemplate: debian-12.tar.zst
`), wantErr: []string{"spec.template.ostemplate", "template.ostemplate must be a volume ID"}},
		"ImageWithoutTag": {manifest: ct(ctHead + `
    image: {reference: docker.io/library/nginx}
`), wantErr: []string{"spec.template.image.reference", "image reference must be an OCI reference with a tag"}},
		"FullCloneWithoutClone": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    fullClone: false
`), wantErr: []string{"template.fullClone applies only to a clone (template.name)"}},
		"PasswordOnClone": {manifest: ct(ctHead + `
    name: tpl
    password: hunter22
`), wantErr: []string{"template.password, template.passwordFrom, template.sshKeys and template.unprivileged are set when a container is created"}},
		"PasswordBoth": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    password: hunter22
    passwordFrom: {name: s, key: k}
`), wantErr: []string{"template.password and template.passwordFrom are mutually exclusive"}},
		"PasswordTooShort": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    password: abc
`), wantErr: []string{"spec.template.password", "at least 5 chars long"}},

		// Rejected: hardware.
		"RootFSWithPath": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    disk:
    - {storage: local-lvm, size: 8, path: /srv}
`), wantErr: []string{"template.disk[0] is the root filesystem and has no path"}},
		"MountPointWithoutPath": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    disk:
    - {storage: local-lvm, size: 8}
    - {storage: local-lvm, size: 2}
`), wantErr: []string{"template.disk entries after the first are mount points and need a path"}},
		"MountPathRelative": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    disk:
    - {storage: local-lvm, size: 8}
    - {storage: local-lvm, size: 2, path: srv}
`), wantErr: []string{"spec.template.disk[1].path", "disk path must be an absolute path inside the container other than /"}},
		"MountPathTwice": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    disk:
    - {storage: local-lvm, size: 8}
    - {storage: local-lvm, size: 2, path: /srv}
    - {storage: local-lvm, size: 2, path: /srv}
`), wantErr: []string{"template.disk paths must be unique"}},
		"SwapNegative": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    swap: -1
`), wantErr: []string{"spec.template.swap", "greater than or equal to 0"}},
		"VLANOutOfRange": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    network: [{bridge: vmbr0, vlan: 4095}]
`), wantErr: []string{"spec.template.network[0].vlan", "less than or equal to 4094"}},
		"IPNotCIDR": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    network: [{bridge: vmbr0, ip: 192.0.2.10}]
`), wantErr: []string{"spec.template.network[0].ip", "network ip must be an IPv4 address in CIDR notation"}},
		"GatewayWithDHCP": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    network: [{bridge: vmbr0, ip: dhcp, gw: 192.0.2.1}]
`), wantErr: []string{"network gw needs a static ip"}},
		"IP6Family": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    network: [{bridge: vmbr0, ip6: 192.0.2.10/24}]
`), wantErr: []string{"spec.template.network[0].ip6", "network ip6 must be an IPv6 address"}},
		"BridgeMissingDefaultsAsKubemox": {manifest: ct(ctHead + `
    ostemplate: local:vztmpl/x.tar.zst
    network: [{model: virtio}]
`)},
		"RebootPolicy": {manifest: ct(`
  name: ct-case
  nodeName: pve1
  rebootPolicy: Sometimes
  template: {ostemplate: "local:vztmpl/x.tar.zst"}
`), wantErr: []string{"spec.rebootPolicy: Unsupported value"}},
		"MigrationPolicy": {manifest: ct(`
  name: ct-case
  nodeName: pve1
  migrationPolicy: Restart
  template: {ostemplate: "local:vztmpl/x.tar.zst"}
`), wantErr: []string{"spec.migrationPolicy: Unsupported value"}},
	}
}
