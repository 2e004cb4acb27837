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

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// seedVirtualMachine is the seed's virtualmachine-sample-clone-new, verbatim:
// a template without a name.
const seedVirtualMachine = `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachine
metadata:
  name: virtualmachine-sample-clone-new
  namespace: default
spec:
  connectionRef:
    name: proxmox-connection-sample
  name: virtualmachine-sample-clone-new
  nodeName: lowtower
  template:
    socket: 1
    cores: 2
    disk:
    - device: scsi0
      size: 60
      storage: local-lvm
    memory: 4096
`

// kubemoxClone is a clone manifest in kubemox's documented format.
const kubemoxClone = `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachine
metadata:
  name: virtualmachine-sample-clone
  namespace: default
spec:
  name: virtualmachine-sample-clone
  nodeName: lowtower
  deletionProtection: false
  enableAutoStart: true
  template:
    name: fedora-template
    cores: 2
    socket: 1
    memory: 4096
    disk:
      - storage: local-lvm
        size: 50
        device: scsi0
      - storage: local-lvm
        size: 20
        device: scsi1
    network:
      - model: virtio
        bridge: vmbr0
`

// kubemoxScratchExample is kubemox's examples/virtualmachinescratch.yaml,
// verbatim (kubectl would apply it to the current namespace; the test uses
// default). It puts cloudInitConfig directly under spec.
const kubemoxScratchExample = `
# This manifest is used to create a VirtualMachine from scratch.
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachine
metadata:
  labels:
  name: virtualmachine-sample-scratch
spec:
  connectionRef:
    # Name of the ProxmoxConnection resource
    name: proxmoxconnection-sample
  name: virtualmachine-sample-scratch
  # Name of the node where the VM will be created
  nodeName: lowtower
  # Spec for the VM
  vmSpec: 
    socket: 1
    cores: 2
    memory: 4096
    disk: 
      - storage: local-lvm
        size: 60
        device: scsi0
    network:
      - model: virtio
        bridge: vmbr0
    osImage:
      name: ide2 
      value: local:iso/ubuntu-23.04-live-server-amd64.iso 
  cloudInitConfig:
    user: "ubuntu"
    passwordFrom: 
        name: cloudinit-secret
        key: password
    upgradePackages: true
    custom:
      userData: "ubuntu-cloud-config-workers.yaml" # That should be inside snippets folder in Proxmox node
`

// vm wraps spec lines (indented by two spaces) into a VirtualMachine
// manifest in namespace default.
func vm(spec string) string {
	return `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachine
metadata:
  name: vm-case
  namespace: default
spec:
` + spec
}

// clone is a valid clone spec header; cases append template fields to it.
const clone = `
  name: vm-case
  nodeName: pve1
  connectionRef: {name: conn}
  template:
    name: tpl
`

// disk is a clone spec with one disk on device dev and size size.
func disk(dev, size string) string {
	return vm(clone + `
    disk:
    - {storage: local-lvm, size: ` + size + `, device: ` + dev + `}
`)
}

func TestVirtualMachineAdmission(t *testing.T) { runAdmission(t, virtualMachineCases()) }

// virtualMachineCases are VirtualMachine manifests the API server accepts or refuses; the refused ones are also rows of the cross-kind bad-input table.
func virtualMachineCases() map[string]admissionCase {
	return map[string]admissionCase{
		// Accepted.
		"SeedSample":            {manifest: seedVirtualMachine},
		"KubemoxClone":          {manifest: kubemoxClone},
		"KubemoxScratchExample": {manifest: kubemoxScratchExample},
		"ScratchWithCloudInit": {manifest: vm(`
  name: web-1.example.com
  nodeName: pve1
  providerConfigRef: {kind: ProxmoxConnection, name: conn}
  writeConnectionSecretToRef: {name: web-1-conn}
  rebootPolicy: Never
  deletionProtection: true
  enableAutoStart: false
  additionalConfig: {ostype: l26, agent: "1"}
  vmSpec:
    cores: 4
    socket: 2
    memory: 8192
    disk:
    - {storage: local-lvm, size: 32, device: virtio0}
    - {storage: ceph, size: 100, device: scsi1}
    network:
    - {model: virtio, bridge: vmbr0}
    - {model: e1000, bridge: vmbr1}
    pciDevices:
    - {type: raw, deviceID: "0000:01:00.0", primaryGPU: true, pcie: true}
    - {type: mapped, deviceID: gpu-a}
    osImage: {name: ide2, value: "local:iso/debian-12.iso"}
    cloudInitConfig:
      user: debian
      passwordFrom: {name: ci, key: password}
      sshKeys: ["ssh-ed25519 AAAAC3Nza... user@host"]
      dnsDomain: example.com
      dnsServers: ["192.0.2.53", "2001:db8::53"]
      upgradePackages: false
      ipConfigs:
      - ipv4: {address: 192.0.2.10/24, gateway: 192.0.2.1}
        ipv6: {address: 2001:db8::10/64, gateway: "2001:db8::1"}
      - ipv4: {address: dhcp}
        ipv6: {address: auto}
      custom: {userData: "local:snippets/user.yaml", vendorData: "local:snippets/vendor.yaml"}
`)},
		"KubemoxIPConfig": {manifest: vm(clone + `
    fullClone: false
    cloudInitConfig:
      user: fedora
      password: not-a-real-one
      ipConfig: {ip: 192.0.2.20, cidr: "24", gateway: 192.0.2.1}
`)},
		"ObserveOnlyImportWithNeither": {manifest: vm(`
  managementPolicies: ["Observe"]
  connectionRef: {name: conn}
`)},
		"ObserveOnlyImportWithTemplate": {manifest: vm(`
  managementPolicies: ["Observe"]
  template: {cores: 2}
`)},
		"NoReferenceUsesDefault": {manifest: vm(`
  name: vm-case
  nodeName: pve1
  template: {name: tpl}
`)},
		"UpperBounds": {manifest: vm(clone + `
    cores: 512
    socket: 16
    memory: 4194304
    disk:
    - {storage: s, size: 131072, device: scsi30}
    - {storage: s, size: 1, device: virtio15}
    - {storage: s, size: 1, device: sata5}
    - {storage: s, size: 1, device: ide3}
`)},
		"LowerBounds": {manifest: vm(clone + `
    cores: 1
    socket: 1
    memory: 16
    disk:
    - {storage: s, size: 1, device: scsi0}
    - {storage: s, size: 1, device: virtio0}
    - {storage: s, size: 1, device: sata0}
    - {storage: s, size: 1, device: ide0}
`)},

		// spec.ha: powerState must agree with ha.state, which decides the power.
		"HAStartedRunning": {manifest: vm(`
  name: vm-case
  nodeName: pve1
  powerState: Running
  ha: {maxRestart: 2, maxRelocate: 0, failback: false}
  template: {name: tpl}
`)},
		"HAStoppedStopped": {manifest: vm(clone + `
  powerState: Stopped
  ha: {state: disabled}
`)},
		"HAStoppedButRunning": {manifest: vm(clone + `
  powerState: Running
  ha: {state: stopped}
`), wantErr: []string{"powerState must agree with ha.state"}},
		"HAStartedButStopped": {manifest: vm(clone + `
  powerState: Stopped
  ha: {}
`), wantErr: []string{"powerState must agree with ha.state"}},
		"HAUnknownState": {manifest: vm(clone + `
  ha: {state: enabled}
`), wantErr: []string{"spec.ha.state", "Unsupported value"}},
		"HANegativeRestart": {manifest: vm(clone + `
  ha: {maxRestart: -1}
`), wantErr: []string{"spec.ha.maxRestart", "should be greater than or equal to 0"}},

		// Rejected: modes.
		"TemplateAndVMSpec": {manifest: vm(clone + `
  vmSpec: {cores: 2}
`), wantErr: []string{"template and vmSpec are mutually exclusive"}},
		"Neither": {manifest: vm(`
  name: vm-case
  nodeName: pve1
`), wantErr: []string{"one of template or vmSpec is required, unless managementPolicies is [\"Observe\"]"}},
		"NeitherWithObserveAndDelete": {manifest: vm(`
  name: vm-case
  nodeName: pve1
  managementPolicies: ["Observe", "Delete"]
`), wantErr: []string{"one of template or vmSpec is required"}},
		"NameMissing": {manifest: vm(`
  nodeName: pve1
  template: {name: tpl}
`), wantErr: []string{"name is required, unless managementPolicies is [\"Observe\"]"}},
		"NodeNameMissing": {manifest: vm(`
  name: vm-case
  template: {name: tpl}
`), wantErr: []string{"nodeName or placement is required, unless managementPolicies is [\"Observe\"]"}},
		"PlacementInsteadOfNodeName": {manifest: vm(`
  name: vm-case
  placement: {allowedNodes: [pve1, pve2]}
  template: {name: tpl}
`)},
		"PlacementNoNodes": {manifest: vm(`
  name: vm-case
  placement: {allowedNodes: []}
  template: {name: tpl}
`), wantErr: []string{"spec.placement.allowedNodes", "should have at least 1 items"}},
		"PlacementEmptyNodeName": {manifest: vm(`
  name: vm-case
  placement: {allowedNodes: [pve1, ""]}
  template: {name: tpl}
`), wantErr: []string{"spec.placement.allowedNodes[1]", "at least 1 chars long"}},
		"PlacementDuplicateNode": {manifest: vm(`
  name: vm-case
  placement: {allowedNodes: [pve1, pve1]}
  template: {name: tpl}
`), wantErr: []string{"spec.placement.allowedNodes[1]", "Duplicate value"}},
		"NameNotADNSName": {manifest: vm(`
  name: my_vm
  nodeName: pve1
  template: {name: tpl}
`), wantErr: []string{"spec.name", "name must be a DNS name"}},
		"RebootPolicyUnknown": {manifest: vm(clone + `
  rebootPolicy: Sometimes
`), wantErr: []string{"spec.rebootPolicy: Unsupported value"}},
		"ManagementPolicyUnknown": {manifest: vm(clone + `
  managementPolicies: ["Everything"]
`), wantErr: []string{"spec.managementPolicies[0]: Unsupported value"}},

		// Rejected: connection references.
		"ProviderConfigRefOtherKind": {manifest: vm(clone + `
  providerConfigRef: {kind: ClusterProviderConfig, name: conn}
`), wantErr: []string{"providerConfigRef.kind must be ProxmoxConnection"}},
		"ReferencesDisagree": {manifest: vm(clone + `
  providerConfigRef: {kind: ProxmoxConnection, name: other}
`), wantErr: []string{"providerConfigRef.name and connectionRef.name must name the same ProxmoxConnection"}},

		// Rejected: sizes and counts.
		"CoresZero": {manifest: vm(clone + `
    cores: 0
`), wantErr: []string{"spec.template.cores", "greater than or equal to 1"}},
		"CoresTooMany": {manifest: vm(clone + `
    cores: 513
`), wantErr: []string{"spec.template.cores", "less than or equal to 512"}},
		// Accepted as kubemox and Proxmox VE's schema accept them (no maximum).
		"ManySockets": {manifest: vm(`
  name: vm-case
  nodeName: pve1
  vmSpec: {socket: 17}
`)},
		"MemoryTooSmall": {manifest: vm(clone + `
    memory: 8
`), wantErr: []string{"spec.template.memory", "greater than or equal to 16"}},
		"DiskSizeZero": {manifest: disk("scsi0", "0"),
			wantErr: []string{"spec.template.disk[0].size", "greater than or equal to 1"}},
		"LargeDisk": {manifest: disk("scsi0", "131073")},

		// Rejected: devices.
		"DeviceSCSI31":   {manifest: disk("scsi31", "10"), wantErr: []string{"spec.template.disk[0].device", "device must be one of scsi0-scsi30, virtio0-virtio15, sata0-sata5, ide0-ide3"}},
		"DeviceVirtio16": {manifest: disk("virtio16", "10"), wantErr: []string{"spec.template.disk[0].device", "device must be one of"}},
		"DeviceSATA6":    {manifest: disk("sata6", "10"), wantErr: []string{"spec.template.disk[0].device", "device must be one of"}},
		"DeviceIDE4":     {manifest: disk("ide4", "10"), wantErr: []string{"spec.template.disk[0].device", "device must be one of"}},
		"DeviceNVMe":     {manifest: disk("nvme0", "10"), wantErr: []string{"spec.template.disk[0].device", "device must be one of"}},
		"DeviceNoSlot":   {manifest: disk("scsi", "10"), wantErr: []string{"spec.template.disk[0].device", "device must be one of"}},
		"DeviceLeadingZero": {manifest: disk("scsi01", "10"),
			wantErr: []string{"spec.template.disk[0].device", "device must be one of"}},
		"DuplicateDevices": {manifest: vm(clone + `
    disk:
    - {storage: local-lvm, size: 10, device: scsi0}
    - {storage: other, size: 20, device: scsi0}
`), wantErr: []string{"spec.template.disk", "disk devices must be unique"}},
		"DuplicateDevicesInVMSpec": {manifest: vm(`
  name: vm-case
  nodeName: pve1
  vmSpec:
    disk:
    - {storage: local-lvm, size: 10, device: virtio0}
    - {storage: local-lvm, size: 10, device: virtio0}
`), wantErr: []string{"spec.vmSpec.disk", "disk devices must be unique"}},
		"MappedPCIWithPCIE": {manifest: vm(clone + `
    pciDevices:
    - {type: mapped, deviceID: gpu-a, pcie: true}
`), wantErr: []string{"spec.template.pciDevices[0]", "pcie must not be set on a PCI device of type mapped"}},
		"PCITypeUnknown": {manifest: vm(clone + `
    pciDevices:
    - {type: usb, deviceID: "0000:01:00.0"}
`), wantErr: []string{"spec.template.pciDevices[0].type: Unsupported value"}},

		// Rejected: cloud-init.
		"CloudInitPasswordAndPasswordFrom": {manifest: vm(clone + `
    cloudInitConfig:
      password: x
      passwordFrom: {name: ci, key: password}
`), wantErr: []string{"cloudInitConfig.password and cloudInitConfig.passwordFrom are mutually exclusive"}},
		"CloudInitInTwoPlaces": {manifest: vm(clone + `
    cloudInitConfig: {user: a}
  cloudInitConfig: {user: b}
`), wantErr: []string{"cloudInitConfig may be set in one place only"}},
		"IPConfigAndIPConfigs": {manifest: vm(clone + `
    cloudInitConfig:
      ipConfig: {ip: dhcp}
      ipConfigs:
      - ipv4: {address: dhcp}
`), wantErr: []string{"cloudInitConfig.ipConfig and cloudInitConfig.ipConfigs are mutually exclusive"}},
		"IPv4AddressWithoutPrefix": {manifest: vm(clone + `
    cloudInitConfig:
      ipConfigs:
      - ipv4: {address: 192.0.2.10}
`), wantErr: []string{"spec.template.cloudInitConfig.ipConfigs[0].ipv4.address", "ipv4.address must be an IPv4 address in CIDR notation"}},
		"IPv6AddressGivenIPv4": {manifest: vm(clone + `
    cloudInitConfig:
      ipConfigs:
      - ipv6: {address: 192.0.2.10/24}
`), wantErr: []string{"spec.template.cloudInitConfig.ipConfigs[0].ipv6.address", "ipv6.address must be"}},
		"IPv6GatewayGivenIPv4": {manifest: vm(clone + `
    cloudInitConfig:
      ipConfigs:
      - ipv6: {address: auto, gateway: 192.0.2.1}
`), wantErr: []string{"spec.template.cloudInitConfig.ipConfigs[0].ipv6.gateway", "ipv6.gateway must be an IPv6 address"}},
	}
}

// TestConnectionReferences covers the four reference cases of issue 3 on
// objects that are really stored, so defaults are observed as persisted.
func TestConnectionReferences(t *testing.T) {
	c := newClient(t)

	t.Run("ConnectionRefOnlyIsStoredWithoutProviderConfigRef", func(t *testing.T) {
		u := parse(t, vm(clone))
		u.SetName("ref-connection-only")
		createAndCleanup(t, c, u)

		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := c.Get(testContext(t), client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatalf("cannot read back: %v", err)
		}
		if ref, found, _ := unstructured.NestedMap(got.Object, "spec", "providerConfigRef"); found {
			t.Errorf("spec.providerConfigRef = %v after create, want no default", ref)
		}
		typed := &v1alpha1.VirtualMachine{}
		if err := c.Get(testContext(t), client.ObjectKeyFromObject(u), typed); err != nil {
			t.Fatalf("cannot read back typed: %v", err)
		}
		want := &xpv2.ProviderConfigReference{Kind: "ProxmoxConnection", Name: "conn"}
		if diff := cmp.Diff(want, typed.GetProviderConfigReference()); diff != "" {
			t.Errorf("GetProviderConfigReference(): -want, +got:\n%s", diff)
		}
	})

	runAdmission(t, map[string]admissionCase{
		"OtherKindRejected": {manifest: vm(clone + `
  providerConfigRef: {kind: ClusterProviderConfig, name: conn}
`), wantErr: []string{"providerConfigRef.kind must be ProxmoxConnection"}},
		"BothWithDifferentNamesRejected": {manifest: vm(clone + `
  providerConfigRef: {kind: ProxmoxConnection, name: other}
`), wantErr: []string{"providerConfigRef.name and connectionRef.name must name the same ProxmoxConnection"}},
		"BothWithSameNameAccepted": {manifest: vm(clone + `
  providerConfigRef: {kind: ProxmoxConnection, name: conn}
`)},
	})
}

// TestExplicitFalseRoundTrips checks that booleans defaulting to true keep an
// explicit false through create, a controller-style full update, and reads.
func TestExplicitFalseRoundTrips(t *testing.T) {
	c := newClient(t)
	ctx := testContext(t)

	off := &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "autostart-off", Namespace: "default"},
		Spec: v1alpha1.VirtualMachineSpec{
			Name:            "autostart-off",
			NodeName:        "pve1",
			EnableAutoStart: ptr.To(false),
			Template: &v1alpha1.VirtualMachineCloneSpec{
				Name:            "tpl",
				FullClone:       ptr.To(false),
				CloudInitConfig: &v1alpha1.CloudInitConfig{UpgradePackages: ptr.To(false)},
			},
		},
	}
	createAndCleanup(t, c, off)

	got := &v1alpha1.VirtualMachine{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(off), got); err != nil {
		t.Fatalf("cannot read back: %v", err)
	}
	got.SetAnnotations(map[string]string{"crossplane.io/external-name": "100"})
	if err := c.Update(ctx, got); err != nil {
		t.Fatalf("controller-style update failed: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(off), got); err != nil {
		t.Fatalf("cannot read back after update: %v", err)
	}
	for name, v := range map[string]*bool{
		"enableAutoStart":                          got.Spec.EnableAutoStart,
		"template.fullClone":                       got.Spec.Template.FullClone,
		"template.cloudInitConfig.upgradePackages": got.Spec.Template.CloudInitConfig.UpgradePackages,
	} {
		if v == nil || *v {
			t.Errorf("spec.%s = %v after create and update, want false", name, fmtBool(v))
		}
	}

	on := &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "autostart-default", Namespace: "default"},
		Spec: v1alpha1.VirtualMachineSpec{
			Name:     "autostart-default",
			NodeName: "pve1",
			Template: &v1alpha1.VirtualMachineCloneSpec{Name: "tpl", CloudInitConfig: &v1alpha1.CloudInitConfig{}},
		},
	}
	createAndCleanup(t, c, on)
	if err := c.Get(ctx, client.ObjectKeyFromObject(on), got); err != nil {
		t.Fatalf("cannot read back: %v", err)
	}
	for name, v := range map[string]*bool{
		"enableAutoStart":                          got.Spec.EnableAutoStart,
		"template.fullClone":                       got.Spec.Template.FullClone,
		"template.cloudInitConfig.upgradePackages": got.Spec.Template.CloudInitConfig.UpgradePackages,
	} {
		if v == nil || !*v {
			t.Errorf("spec.%s = %v when omitted, want the default true", name, fmtBool(v))
		}
	}
	if diff := cmp.Diff(xpv2.ManagementPolicies{xpv2.ManagementActionAll}, got.Spec.ManagementPolicies); diff != "" {
		t.Errorf("spec.managementPolicies default: -want, +got:\n%s", diff)
	}
	if got.Spec.RebootPolicy != v1alpha1.RebootPolicyAlways {
		t.Errorf("spec.rebootPolicy = %q when omitted, want Always", got.Spec.RebootPolicy)
	}
	if got.Spec.ProviderConfigReference != nil {
		t.Errorf("spec.providerConfigRef = %+v when omitted, want no default", got.Spec.ProviderConfigReference)
	}
}

func createAndCleanup(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(testContext(t), obj); err != nil {
		t.Fatalf("cannot create %s: %v", obj.GetName(), err)
	}
	t.Cleanup(func() {
		// A fresh context: the test's own may be cancelled by now.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := client.IgnoreNotFound(c.Delete(ctx, obj)); err != nil {
			t.Errorf("cannot delete %s: %v", obj.GetName(), err)
		}
	})
}

func fmtBool(v *bool) string {
	if v == nil {
		return "<unset>"
	}
	if *v {
		return "true"
	}
	return "false"
}
