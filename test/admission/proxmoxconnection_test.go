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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The seed's two ProxmoxConnection examples, verbatim.
const (
	seedPasswordInline = `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: ProxmoxConnection
metadata:
  name: proxmox-connection-sample
spec:
  endpoint: "PROXMOX_ENDPOINT"
  username: "PROXMOX_USERNAME"
  password: "PROXMOX_PASSWORD"
  insecureSkipVerify: true
`
	seedTokenSecret = `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: ProxmoxConnection
metadata:
  name: proxmox-connection-sample
spec:
  endpoint: "PROXMOX_ENDPOINT"
  tokenID: "root@pam!kubemox"
  secretFrom:
    name: proxmox-credentials
    namespace: kubemox
    key: token
  insecureSkipVerify: true
`
)

// pxc wraps a spec (indented by two spaces) into a ProxmoxConnection manifest.
func pxc(spec string) string {
	return `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: ProxmoxConnection
metadata:
  name: pxc-case
spec:
` + spec
}

func TestProxmoxConnectionAdmission(t *testing.T) { runAdmission(t, proxmoxConnectionCases()) }

// proxmoxConnectionCases are ProxmoxConnection manifests the API server accepts or refuses; the refused ones are also rows of the cross-kind bad-input table.
func proxmoxConnectionCases() map[string]admissionCase {
	return map[string]admissionCase{
		// Accepted.
		"SeedPasswordInline": {manifest: seedPasswordInline},
		"SeedTokenSecret":    {manifest: seedTokenSecret},
		"UsernamePasswordFrom": {manifest: pxc(`
  endpoint: https://pve.example.com:8006/api2/json
  username: root@pam
  passwordFrom: {name: creds, namespace: kubemox, key: password}
`)},
		"TokenInlineWithCABundle": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: automation@pve!crossplane-1
  secret: 4a5e9a3c-0000-4000-8000-000000000000
  caBundle: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
  maxConcurrentRequests: 64
`)},
		"TokenFromSecretWithCAFrom": {manifest: pxc(`
  endpoint: "[2001:db8::1]:8006"
  tokenID: root@pam!kubemox
  secretFrom: {name: creds, namespace: kubemox, key: token}
  caFrom: {name: pve-ca, namespace: kubemox, key: ca.crt}
  maxConcurrentRequests: 1
`)},

		"SeveralEndpoints": {manifest: pxc(`
  endpoint: pve1.example.com
  endpoints: [pve2.example.com, "https://pve3.example.com:8006/api2/json", "[2001:db8::3]:8006"]
  tokenID: root@pam!kubemox
  secret: x
`)},

		"AdoptionFromClusters": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: root@pam!kubemox
  secret: x
  adoption: {fromClusters: [0d451aff-67dc-4e3c-bfdc-c49c6bb7e9dc, unknown]}
`)},
		"AdoptionAnyCluster": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: root@pam!kubemox
  secret: x
  adoption: {anyCluster: true}
`)},

		// Rejected: each message names the fields to change.
		"AdoptionBoth": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: root@pam!kubemox
  secret: x
  adoption: {anyCluster: true, fromClusters: [a]}
`), wantErr: []string{"adoption: set anyCluster or list fromClusters, not both"}},
		"AdoptionBadClusterID": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: root@pam!kubemox
  secret: x
  adoption: {fromClusters: ["has space"]}
`), wantErr: []string{"fromClusters"}},
		"PasswordAndPasswordFrom": {manifest: pxc(`
  endpoint: pve.example.com
  username: root@pam
  password: x
  passwordFrom: {name: creds, namespace: kubemox, key: password}
`), wantErr: []string{"password and passwordFrom are mutually exclusive"}},
		"SecretAndSecretFrom": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: root@pam!kubemox
  secret: x
  secretFrom: {name: creds, namespace: kubemox, key: token}
`), wantErr: []string{"secret and secretFrom are mutually exclusive"}},
		"CABundleAndCAFrom": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: root@pam!kubemox
  secret: x
  caBundle: pem
  caFrom: {name: pve-ca, namespace: kubemox, key: ca.crt}
`), wantErr: []string{"caBundle and caFrom are mutually exclusive"}},
		"NoCredential": {manifest: pxc(`
  endpoint: pve.example.com
  insecureSkipVerify: true
`), wantErr: []string{"no credential: set username with password or passwordFrom, or tokenID with secret or secretFrom"}},
		"UsernameAndToken": {manifest: pxc(`
  endpoint: pve.example.com
  username: root@pam
  password: x
  tokenID: root@pam!kubemox
  secret: token-secret
`), wantErr: []string{"username/password/passwordFrom and tokenID/secret/secretFrom are mutually exclusive"}},
		"PasswordFromAndSecretFrom": {manifest: pxc(`
  endpoint: pve.example.com
  username: root@pam
  passwordFrom: {name: creds, namespace: kubemox, key: password}
  tokenID: root@pam!kubemox
  secretFrom: {name: creds, namespace: kubemox, key: token}
`), wantErr: []string{"username/password/passwordFrom and tokenID/secret/secretFrom are mutually exclusive"}},
		"UsernameWithoutPassword": {manifest: pxc(`
  endpoint: pve.example.com
  username: root@pam
`), wantErr: []string{"username requires password or passwordFrom"}},
		"PasswordWithoutUsername": {manifest: pxc(`
  endpoint: pve.example.com
  password: x
`), wantErr: []string{"password and passwordFrom require username"}},
		"PasswordFromWithoutUsername": {manifest: pxc(`
  endpoint: pve.example.com
  passwordFrom: {name: creds, namespace: kubemox, key: password}
`), wantErr: []string{"password and passwordFrom require username"}},
		"TokenIDWithoutSecret": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: root@pam!kubemox
`), wantErr: []string{"tokenID requires secret or secretFrom"}},
		"SecretWithoutTokenID": {manifest: pxc(`
  endpoint: pve.example.com
  secret: x
`), wantErr: []string{"secret and secretFrom require tokenID"}},
		"SecretFromWithoutTokenID": {manifest: pxc(`
  endpoint: pve.example.com
  secretFrom: {name: creds, namespace: kubemox, key: token}
`), wantErr: []string{"secret and secretFrom require tokenID"}},
		"TokenIDWithoutTokenName": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: root@pam
  secret: x
`), wantErr: []string{"spec.tokenID", "tokenID must have the form user@realm!tokenname"}},
		"TokenIDWithoutRealm": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: root!kubemox
  secret: x
`), wantErr: []string{"spec.tokenID", "tokenID must have the form user@realm!tokenname"}},
		"TokenIDWithSpace": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: "root@pam!kube mox"
  secret: x
`), wantErr: []string{"spec.tokenID", "tokenID must have the form user@realm!tokenname"}},
		"EndpointEmpty": {manifest: pxc(`
  endpoint: ""
  username: root@pam
  password: x
`), wantErr: []string{"spec.endpoint", "at least 1 chars long"}},
		"EndpointMissing": {manifest: pxc(`
  username: root@pam
  password: x
`), wantErr: []string{"spec.endpoint: Required value"}},
		"EndpointWithSpace": {manifest: pxc(`
  endpoint: "pve example.com"
  username: root@pam
  password: x
`), wantErr: []string{"spec.endpoint", "endpoint must be a host, host:port or https URL without whitespace"}},
		"EndpointsWithSpace": {manifest: pxc(`
  endpoint: pve1.example.com
  endpoints: ["pve2 example.com"]
  username: root@pam
  password: x
`), wantErr: []string{"spec.endpoints", "each entry of endpoints must be a host, host:port or https URL without whitespace"}},
		"EndpointsEmptyEntry": {manifest: pxc(`
  endpoint: pve1.example.com
  endpoints: [""]
  username: root@pam
  password: x
`), wantErr: []string{"spec.endpoints[0]", "at least 1 chars long", "each entry of endpoints must be a host, host:port or https URL without whitespace"}},
		"EndpointsRepeatEndpoint": {manifest: pxc(`
  endpoint: pve1.example.com
  endpoints: [pve2.example.com, pve1.example.com]
  username: root@pam
  password: x
`), wantErr: []string{"endpoints must not repeat endpoint"}},
		"EndpointsTwice": {manifest: pxc(`
  endpoint: pve1.example.com
  endpoints: [pve2.example.com, pve2.example.com]
  username: root@pam
  password: x
`), wantErr: []string{"spec.endpoints", "endpoints must not list the same endpoint twice"}},
		"EndpointsTooMany": {manifest: pxc(`
  endpoint: pve1.example.com
  endpoints: [a, b, c, d, e, f, g, h, i]
  username: root@pam
  password: x
`), wantErr: []string{"spec.endpoints", "must have at most 8 items"}},
		"PasswordFromWithoutNamespace": {manifest: pxc(`
  endpoint: pve.example.com
  username: root@pam
  passwordFrom: {name: creds, key: password}
`), wantErr: []string{"spec.passwordFrom.namespace: Required value"}},
		"SecretFromEmptyKey": {manifest: pxc(`
  endpoint: pve.example.com
  tokenID: root@pam!kubemox
  secretFrom: {name: creds, namespace: kubemox, key: ""}
`), wantErr: []string{"spec.secretFrom.key", "at least 1 chars long"}},
		"MaxConcurrentRequestsZero": {manifest: pxc(`
  endpoint: pve.example.com
  username: root@pam
  password: x
  maxConcurrentRequests: 0
`), wantErr: []string{"spec.maxConcurrentRequests", "greater than or equal to 1"}},
		"MaxConcurrentRequestsTooMany": {manifest: pxc(`
  endpoint: pve.example.com
  username: root@pam
  password: x
  maxConcurrentRequests: 65
`), wantErr: []string{"spec.maxConcurrentRequests", "less than or equal to 64"}},
		"AllowedNamespacesNamesAndSelector": {manifest: pxc(`
  endpoint: pve.example.com
  username: root@pam
  password: x
  allowedNamespaces:
    names: [team-a]
    selector: {matchLabels: {team: a}}
`)},
		"AllowedNamespacesEmpty": {manifest: pxc(`
  endpoint: pve.example.com
  username: root@pam
  password: x
  allowedNamespaces: {}
`), wantErr: []string{"spec.allowedNamespaces", "allowedNamespaces needs names or selector"}},
		"AllowedNamespacesBadName": {manifest: pxc(`
  endpoint: pve.example.com
  username: root@pam
  password: x
  allowedNamespaces: {names: [Team_A]}
`), wantErr: []string{"spec.allowedNamespaces.names[0]", "should match"}},
	}
}

// TestExamplesAccepted applies every manifest under examples/ (the seed's
// examples as the repository ships them) in dry-run.
func TestExamplesAccepted(t *testing.T) {
	c := newClient(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found under examples/: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("cannot read %s: %v", f, err)
		}
		for i, doc := range strings.Split(string(b), "\n---") {
			u := parse(t, doc)
			if u.GetAPIVersion() != "proxmox.alperen.cloud/v1alpha1" {
				continue // Secrets and other kinds that accompany the examples
			}
			if err := c.Create(testContext(t), u, client.DryRunAll); err != nil {
				t.Errorf("%s document %d (%s %s) rejected: %v", f, i, u.GetKind(), u.GetName(), err)
			}
		}
	}
}

func TestProxmoxConnectionDefaults(t *testing.T) {
	c := newClient(t)
	u := parse(t, seedPasswordInline)
	if err := c.Create(testContext(t), u, client.DryRunAll); err != nil {
		t.Fatalf("seed example rejected: %v", err)
	}
	got, found, err := unstructuredInt(u.Object, "spec", "maxConcurrentRequests")
	if err != nil || !found || got != 4 {
		t.Errorf("spec.maxConcurrentRequests = %d (found %v, err %v), want the default 4", got, found, err)
	}
}
