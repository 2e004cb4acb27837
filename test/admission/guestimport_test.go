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
)

// guestImport wraps spec lines (indented by two spaces) into a GuestImport
// manifest in namespace default.
func guestImport(spec string) string {
	return `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: GuestImport
metadata:
  name: import-case
  namespace: default
spec:
` + spec
}

func TestGuestImportAdmission(t *testing.T) { runAdmission(t, guestImportCases()) }

// guestImportCases are GuestImport manifests the API server accepts or
// refuses; the refused ones are also rows of the cross-kind bad-input table.
func guestImportCases() map[string]admissionCase {
	return map[string]admissionCase{
		// Accepted.
		"Everything": {manifest: guestImport(`
  connectionRef: {name: conn}
  managementPolicies: ["*"]
  interval: 1h30m
  selector:
    nodes: [pve1]
    pools: [prod]
    tags: [web]
    types: [qemu, lxc]
    namePattern: "web-*"
    includeTemplates: true
    vmidRanges:
    - {from: 100, to: 199}
    - {from: 500, to: 500}
`)},
		"Nothing": {manifest: guestImport(`  {}
`)},

		// Rejected.
		"ManagementPoliciesPartial": {manifest: guestImport(`
  managementPolicies: ["Observe", "Delete"]
`), wantErr: []string{`managementPolicies must be ["Observe"] or ["*"]`}},
		"VMIDRangeReversed": {manifest: guestImport(`
  selector:
    vmidRanges:
    - {from: 200, to: 100}
`), wantErr: []string{"spec.selector.vmidRanges[0]", "vmidRanges: to must not be below from"}},
		"VMIDBelowPVEsRange": {manifest: guestImport(`
  selector:
    vmidRanges:
    - {from: 99, to: 100}
`), wantErr: []string{"spec.selector.vmidRanges[0].from", "greater than or equal to 100"}},
		"VMIDRangeOpen": {manifest: guestImport(`
  selector:
    vmidRanges:
    - {from: 100}
`), wantErr: []string{"spec.selector.vmidRanges[0].to: Required value"}},
		"GuestTypeUnknown": {manifest: guestImport(`
  selector:
    types: [vm]
`), wantErr: []string{"spec.selector.types[0]: Unsupported value"}},
		"NamePatternTooLong": {manifest: guestImport(`
  selector:
    namePattern: "` + strings.Repeat("a", 129) + `"
`), wantErr: []string{"spec.selector.namePattern", "may not be more than 128"}},
		"IntervalNotADuration": {manifest: guestImport(`
  interval: every day
`), wantErr: []string{"spec.interval", "should match"}},
		"IntervalWithoutUnit": {manifest: guestImport(`
  interval: "300"
`), wantErr: []string{"spec.interval", "should match"}},
		"ConnectionRefEmptyName": {manifest: guestImport(`
  connectionRef: {name: ""}
`), wantErr: []string{"spec.connectionRef.name", "at least 1 chars long"}},
	}
}
