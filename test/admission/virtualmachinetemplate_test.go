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

// kubemoxTemplate is kubemox's VirtualMachineTemplate sample layout (with a
// namespace, as kubectl adds): a cloud image downloaded as iso.
const kubemoxTemplate = `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachineTemplate
metadata:
  name: virtualmachinetemplate-sample
  namespace: default
spec:
  connectionRef:
    name: proxmox-connection-sample
  name: ubuntu-template
  node: lowtower
  virtualMachineConfig:
    sockets: 1
    cores: 2
    memory: 4096
    network:
      model: virtio
      bridge: vmbr0
  imageConfig:
    content: iso
    filename: noble-server-cloudimg-amd64.img
    node: lowtower
    storage: local
    url: https://cloud-images.ubuntu.com/noble/current/noble-server-cloudimg-amd64.img
  cloudInitConfig:
    user: ubuntu
    password: ubuntu
    upgradePackages: false
    ipConfig:
      ip: dhcp
`

func vmt(spec string) string {
	return `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachineTemplate
metadata:
  name: vmt-case
  namespace: default
spec:` + spec
}

const vmtImage = `
  imageConfig:
    content: import
    filename: debian-12.qcow2
    node: pve1
    url: https://cloud.example/debian-12.qcow2`

func TestVirtualMachineTemplateAdmission(t *testing.T) {
	runAdmission(t, virtualMachineTemplateCases())
}

// virtualMachineTemplateCases are VirtualMachineTemplate manifests the API
// server accepts or refuses; the refused ones are also rows of the
// cross-kind bad-input table.
func virtualMachineTemplateCases() map[string]admissionCase {
	return map[string]admissionCase{
		"KubemoxSample": {manifest: kubemoxTemplate},
		"Minimal": {manifest: vmt(`
  name: debian-12
  node: pve1` + vmtImage)},
		"MissingImage": {manifest: vmt(`
  name: debian-12
  node: pve1`), wantErr: []string{"spec.imageConfig", "Required value"}},
		"NameNotADNSName": {manifest: vmt(`
  name: debian_12
  node: pve1` + vmtImage), wantErr: []string{"name must be a DNS name"}},
		"CompressedImportImage": {manifest: vmt(`
  name: debian-12
  node: pve1
  imageConfig:
    content: import
    filename: debian-12.qcow2
    node: pve1
    url: https://cloud.example/debian-12.qcow2.zst
    compression: zst`), wantErr: []string{"compression is valid only for content iso"}},
		"TooManyCores": {manifest: vmt(`
  name: debian-12
  node: pve1
  virtualMachineConfig:
    cores: 1000` + vmtImage), wantErr: []string{"spec.virtualMachineConfig.cores"}},
		"PasswordAndPasswordFrom": {manifest: vmt(`
  name: debian-12
  node: pve1
  cloudInitConfig:
    password: x
    passwordFrom: {name: s, key: k}` + vmtImage), wantErr: []string{"cloudInitConfig.password and cloudInitConfig.passwordFrom are mutually exclusive"}},
	}
}

func TestVirtualMachineTemplateRefAdmission(t *testing.T) {
	runAdmission(t, map[string]admissionCase{
		"ByReference": {manifest: vm(`
  name: web
  nodeName: pve1
  template:
    templateRef: {name: debian-12-template}`)},
		"NameAndReference": {manifest: vm(`
  name: web
  nodeName: pve1
  template:
    name: debian-12
    templateRef: {name: debian-12-template}`), wantErr: []string{"template.name and template.templateRef are mutually exclusive"}},
		"EmptyReference": {manifest: vm(`
  name: web
  nodeName: pve1
  template:
    templateRef: {name: ""}`), wantErr: []string{"spec.template.templateRef.name"}},
	})
}
