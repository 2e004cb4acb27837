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
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kubemoxSnapshot is a VirtualMachineSnapshot as kubemox's docs write one.
const kubemoxSnapshot = `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachineSnapshot
metadata:
  name: virtualmachinesnapshot-sample
  namespace: default
spec:
  connectionRef:
    name: proxmox-connection-sample
  virtualMachineName: virtualmachine-sample-clone
  snapshotName: snapshot-sample
  timestamp: "2024-05-01T10:00:00Z"
`

func snapshot(spec string) string {
	return `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachineSnapshot
metadata:
  name: snap-admission
  namespace: default
spec:
` + spec
}

func TestVirtualMachineSnapshotAdmission(t *testing.T) {
	runAdmission(t, virtualMachineSnapshotCases())
}

// virtualMachineSnapshotCases are VirtualMachineSnapshot manifests the API
// server accepts or refuses; the refused ones are also rows of the
// cross-kind bad-input table.
func virtualMachineSnapshotCases() map[string]admissionCase {
	return map[string]admissionCase{
		"kubemox's manifest applies unchanged": {manifest: kubemoxSnapshot},
		"a guest named by vmid and nodeName": {manifest: snapshot(`
  vmid: 4242
  nodeName: pve
  description: before the upgrade
  vmstate: true
`)},
		"no guest named": {manifest: snapshot(`
  description: orphan
`), wantErr: []string{"exactly one of virtualMachineName, containerName or vmid is required"}},
		"both a VirtualMachine and a vmid": {manifest: snapshot(`
  virtualMachineName: web
  vmid: 4242
  nodeName: pve
`), wantErr: []string{"exactly one of virtualMachineName, containerName or vmid is required"}},
		"a Container": {manifest: snapshot(`
  containerName: web-ct
`)},
		"both a VirtualMachine and a Container": {manifest: snapshot(`
  virtualMachineName: web
  containerName: web-ct
`), wantErr: []string{"exactly one of virtualMachineName, containerName or vmid is required"}},
		"vmid without nodeName": {manifest: snapshot(`
  vmid: 4242
`), wantErr: []string{"vmid and nodeName go together"}},
		"nodeName with a VirtualMachine": {manifest: snapshot(`
  virtualMachineName: web
  nodeName: pve
`), wantErr: []string{"vmid and nodeName go together"}},
		"a name starting with a digit": {manifest: snapshot(`
  virtualMachineName: web
  snapshotName: 1st
`), wantErr: []string{"snapshotName must be 2 to 40 characters"}},
		"a one-character name": {manifest: snapshot(`
  virtualMachineName: web
  snapshotName: a
`), wantErr: []string{"snapshotName must be 2 to 40 characters"}},
		"a dot in the name": {manifest: snapshot(`
  virtualMachineName: web
  snapshotName: v1.2
`), wantErr: []string{"snapshotName must be 2 to 40 characters"}},
		"forty-one characters": {manifest: snapshot(`
  virtualMachineName: web
  snapshotName: ` + strings.Repeat("a", 41) + `
`), wantErr: []string{"spec.snapshotName"}},
		"current in any case": {manifest: snapshot(`
  virtualMachineName: web
  snapshotName: Current
`), wantErr: []string{"snapshotName must not be current or pending"}},
		"pending": {manifest: snapshot(`
  virtualMachineName: web
  snapshotName: PENDING
`), wantErr: []string{"snapshotName must not be current or pending"}},
		"a providerConfigRef of another kind": {manifest: snapshot(`
  virtualMachineName: web
  providerConfigRef:
    kind: ClusterProviderConfig
    name: default
`), wantErr: []string{"providerConfigRef.kind must be ProxmoxConnection"}},
	}
}

// Only the description may change; every other field's change is refused
// naming the field.
func TestVirtualMachineSnapshotImmutability(t *testing.T) {
	c := newClient(t)
	cases := map[string]struct {
		from, to string
		wantErr  string
	}{
		"description changes":    {from: "  virtualMachineName: web\n  description: a\n", to: "  virtualMachineName: web\n  description: b\n"},
		"virtualMachineName":     {from: "  virtualMachineName: web\n", to: "  virtualMachineName: db\n", wantErr: "virtualMachineName is immutable"},
		"snapshotName":           {from: "  virtualMachineName: web\n  snapshotName: one\n", to: "  virtualMachineName: web\n  snapshotName: two\n", wantErr: "snapshotName is immutable"},
		"snapshotName set later": {from: "  virtualMachineName: web\n", to: "  virtualMachineName: web\n  snapshotName: two\n", wantErr: "snapshotName is immutable"},
		"vmstate":                {from: "  virtualMachineName: web\n", to: "  virtualMachineName: web\n  vmstate: true\n", wantErr: "vmstate is immutable"},
		"vmid":                   {from: "  vmid: 4242\n  nodeName: pve\n", to: "  vmid: 4243\n  nodeName: pve\n", wantErr: "vmid is immutable"},
		"nodeName":               {from: "  vmid: 4242\n  nodeName: pve\n", to: "  vmid: 4242\n  nodeName: other\n", wantErr: "nodeName is immutable"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := parse(t, snapshot(tc.from))
			obj.SetName("snap-immutable-" + strings.ReplaceAll(strings.ToLower(name), " ", "-"))
			createAndCleanup(t, c, obj)
			changed := parse(t, snapshot(tc.to))
			changed.SetName(obj.GetName())
			changed.SetResourceVersion(obj.GetResourceVersion())
			err := c.Update(testContext(t), changed, client.DryRunAll)
			if tc.wantErr == "" {
				checkVerdict(t, err, nil)
				return
			}
			checkVerdict(t, err, []string{tc.wantErr})
		})
	}
}

func TestVirtualMachineSnapshotPolicyAdmission(t *testing.T) {
	runAdmission(t, virtualMachineSnapshotPolicyCases())
}

// virtualMachineSnapshotPolicyCases are VirtualMachineSnapshotPolicy
// manifests the API server accepts or refuses; the refused ones are also
// rows of the cross-kind bad-input table.
func virtualMachineSnapshotPolicyCases() map[string]admissionCase {
	return map[string]admissionCase{
		"kubemox's manifest applies unchanged": {manifest: `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachineSnapshotPolicy
metadata:
  name: virtualmachinesnapshotpolicy-sample
  namespace: default
spec:
  connectionRef:
    name: proxmox-connection-sample
  namespaceSelector:
    namespaces: ["default", "kube-system"]
  labelSelector:
    matchLabels:
      app: nginx
  snapshotSchedule: "*/30 * * * *"
`},
		"retention, a time zone and a full selector": {manifest: `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachineSnapshotPolicy
metadata:
  name: policy-full
  namespace: default
spec:
  labelSelector:
    matchExpressions:
    - {key: tier, operator: In, values: [db]}
  snapshotSchedule: "0 2 * * *"
  timeZone: Europe/Berlin
  retention:
    keepLast: 7
    keepWithin: 48h
  snapshotDeletionPolicy: Delete
`},
		"no schedule": {manifest: `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachineSnapshotPolicy
metadata:
  name: policy-noschedule
  namespace: default
spec:
  suspend: true
`, wantErr: []string{"spec.snapshotSchedule"}},
		"keepLast of zero": {manifest: `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachineSnapshotPolicy
metadata:
  name: policy-keep0
  namespace: default
spec:
  snapshotSchedule: "@daily"
  retention:
    keepLast: 0
`, wantErr: []string{"spec.retention.keepLast"}},
		"an unknown deletion policy": {manifest: `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachineSnapshotPolicy
metadata:
  name: policy-orphan
  namespace: default
spec:
  snapshotSchedule: "@daily"
  snapshotDeletionPolicy: Orphan
`, wantErr: []string{"spec.snapshotDeletionPolicy"}},
	}
}
