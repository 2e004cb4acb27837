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

// customCertificate wraps spec lines (indented by two spaces) into a
// CustomCertificate manifest in namespace default.
func customCertificate(spec string) string {
	return `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: CustomCertificate
metadata:
  name: cert-case
  namespace: default
spec:
` + spec
}

func TestCustomCertificateAdmission(t *testing.T) { runAdmission(t, customCertificateCases()) }

// customCertificateCases are CustomCertificate manifests the API server
// accepts or refuses; the refused ones are also rows of the cross-kind
// bad-input table.
func customCertificateCases() map[string]admissionCase {
	return map[string]admissionCase{
		// Accepted.
		"FromATLSSecret": {manifest: customCertificate(`
  connectionRef: {name: conn}
  nodeName: pve1
  tlsSecretRef: {name: pve1-tls}
`)},
		"InlineOnTheSpecsNode": {manifest: customCertificate(`
  proxmoxCertSpec: {nodeName: pve1, certificate: PEM, privateKey: KEY}
`)},

		// Rejected.
		"NoNode": {manifest: customCertificate(`
  tlsSecretRef: {name: pve1-tls}
`), wantErr: []string{"nodeName (or proxmoxCertSpec.nodeName) is required"}},
		"NoSource": {manifest: customCertificate(`
  nodeName: pve1
`), wantErr: []string{"exactly one certificate source: proxmoxCertSpec.certificate, tlsSecretRef or certManagerSpec"}},
		"TwoSources": {manifest: customCertificate(`
  nodeName: pve1
  tlsSecretRef: {name: pve1-tls}
  certManagerSpec: {secretName: pve1-tls}
`), wantErr: []string{"exactly one certificate source"}},
		"CertificateWithoutKey": {manifest: customCertificate(`
  nodeName: pve1
  proxmoxCertSpec: {certificate: PEM}
`), wantErr: []string{"proxmoxCertSpec.certificate and proxmoxCertSpec.privateKey go together"}},
		"NodesDisagree": {manifest: customCertificate(`
  nodeName: pve1
  proxmoxCertSpec: {nodeName: pve2, certificate: PEM, privateKey: KEY}
`), wantErr: []string{"nodeName and proxmoxCertSpec.nodeName must name the same node"}},
		"TLSSecretRefEmptyName": {manifest: customCertificate(`
  nodeName: pve1
  tlsSecretRef: {name: ""}
`), wantErr: []string{"spec.tlsSecretRef.name", "at least 1 chars long"}},
		"ProviderConfigRefOtherKind": {manifest: customCertificate(`
  nodeName: pve1
  tlsSecretRef: {name: pve1-tls}
  providerConfigRef: {kind: ClusterProviderConfig, name: conn}
`), wantErr: []string{"providerConfigRef.kind must be ProxmoxConnection"}},
	}
}
