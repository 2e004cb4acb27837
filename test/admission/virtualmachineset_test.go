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

// vmSet wraps spec lines (indented by two spaces) into a VirtualMachineSet
// manifest in namespace default.
func vmSet(spec string) string {
	return `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachineSet
metadata:
  name: set-case
  namespace: default
spec:
` + spec
}

func TestVirtualMachineSetAdmission(t *testing.T) { runAdmission(t, virtualMachineSetCases()) }

// virtualMachineSetCases are VirtualMachineSet manifests the API server
// accepts or refuses; the refused ones are also rows of the cross-kind
// bad-input table.
func virtualMachineSetCases() map[string]admissionCase {
	return map[string]admissionCase{
		// Accepted.
		"Example": {manifest: vmSet(`
  replicas: 3
  nodeName: pve1
  connectionRef: {name: conn}
  template:
    name: tpl
    cores: 2
    network:
    - {model: virtio, bridge: vmbr0}
`)},
		"ScaledToZero": {manifest: vmSet(`
  replicas: 0
  nodeName: pve1
  template: {name: tpl}
`)},

		// Rejected.
		"ReplicasNegative": {manifest: vmSet(`
  replicas: -1
  nodeName: pve1
  template: {name: tpl}
`), wantErr: []string{"spec.replicas", "greater than or equal to 0"}},
		"ManyReplicasAsKubemox": {manifest: vmSet(`
  replicas: 1001
  nodeName: pve1
  template: {name: tpl}
`)},
		"ReplicasMissing": {manifest: vmSet(`
  nodeName: pve1
  template: {name: tpl}
`), wantErr: []string{"spec.replicas: Required value"}},
		"NodeNameMissing": {manifest: vmSet(`
  replicas: 1
  template: {name: tpl}
`), wantErr: []string{"exactly one of nodeName or placement is required"}},
		"Spread": {manifest: vmSet(`
  replicas: 3
  placement: {allowedNodes: [pve1, pve2, pve3], spread: Nodes}
  template: {name: tpl}
`)},
		"PlacementWithoutSpread": {manifest: vmSet(`
  replicas: 3
  placement: {allowedNodes: [pve1]}
  template: {name: tpl}
`)},
		"NodeNameAndPlacement": {manifest: vmSet(`
  replicas: 1
  nodeName: pve1
  placement: {allowedNodes: [pve1]}
  template: {name: tpl}
`), wantErr: []string{"exactly one of nodeName or placement is required"}},
		"SpreadUnknown": {manifest: vmSet(`
  replicas: 1
  placement: {allowedNodes: [pve1], spread: Zones}
  template: {name: tpl}
`), wantErr: []string{"spec.placement.spread", "supported values: \"Nodes\""}},
		"PlacementEmptyNodeName": {manifest: vmSet(`
  replicas: 1
  placement: {allowedNodes: [""]}
  template: {name: tpl}
`), wantErr: []string{"spec.placement.allowedNodes[0]", "at least 1 chars long"}},
		"NodeNameEmpty": {manifest: vmSet(`
  replicas: 1
  nodeName: ""
  template: {name: tpl}
`), wantErr: []string{"spec.nodeName", "at least 1 chars long"}},
		"ConnectionRefWithoutName": {manifest: vmSet(`
  replicas: 1
  nodeName: pve1
  connectionRef: {}
  template: {name: tpl}
`), wantErr: []string{"spec.connectionRef.name: Required value"}},
	}
}
