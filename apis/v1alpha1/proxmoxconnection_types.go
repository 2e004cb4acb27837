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

// SecretKeySelector selects a key of a Secret in an explicit namespace.
//
// ProxmoxConnection is cluster-scoped, so the namespace cannot be implied from
// the object holding the reference; it has to be written down. The JSON shape
// is the same as Crossplane's SecretKeySelector, with every field required.
type SecretKeySelector struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`

	// Key within the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// ProxmoxConnectionSpec is how to reach and authenticate to a Proxmox VE
// cluster. Exactly one credential is used: a username with a password (inline
// or from a Secret), or an API token ID with its secret (inline or from a
// Secret).
//
// The rules below are evaluated by the API server; each message names the
// fields involved so a rejected manifest says what to change.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.password) && has(self.passwordFrom))",message="password and passwordFrom are mutually exclusive: set only one of them"
// +kubebuilder:validation:XValidation:rule="!(has(self.secret) && has(self.secretFrom))",message="secret and secretFrom are mutually exclusive: set only one of them"
// +kubebuilder:validation:XValidation:rule="!(has(self.caBundle) && has(self.caFrom))",message="caBundle and caFrom are mutually exclusive: set only one of them"
// +kubebuilder:validation:XValidation:rule="has(self.username) || has(self.password) || has(self.passwordFrom) || has(self.tokenID) || has(self.secret) || has(self.secretFrom)",message="no credential: set username with password or passwordFrom, or tokenID with secret or secretFrom"
// +kubebuilder:validation:XValidation:rule="!((has(self.username) || has(self.password) || has(self.passwordFrom)) && (has(self.tokenID) || has(self.secret) || has(self.secretFrom)))",message="username/password/passwordFrom and tokenID/secret/secretFrom are mutually exclusive: use either a username credential or an API token credential"
// +kubebuilder:validation:XValidation:rule="!has(self.username) || has(self.password) || has(self.passwordFrom)",message="username requires password or passwordFrom"
// +kubebuilder:validation:XValidation:rule="!(has(self.password) || has(self.passwordFrom)) || has(self.username)",message="password and passwordFrom require username"
// +kubebuilder:validation:XValidation:rule="!has(self.tokenID) || has(self.secret) || has(self.secretFrom)",message="tokenID requires secret or secretFrom"
// +kubebuilder:validation:XValidation:rule="!(has(self.secret) || has(self.secretFrom)) || has(self.tokenID)",message="secret and secretFrom require tokenID"
// +kubebuilder:validation:XValidation:rule="!has(self.endpoints) || !(self.endpoint in self.endpoints)",message="endpoints must not repeat endpoint: list only the additional endpoints there"
type ProxmoxConnectionSpec struct {
	// Endpoint of the Proxmox VE API. Accepted forms: host, host:port,
	// https://host:port, https://host:port/api2/json and IPv6 literals
	// ([::1]:8006). The port defaults to 8006.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^\\\\S+$')",message="endpoint must be a host, host:port or https URL without whitespace"
	Endpoint string `json:"endpoint"`

	// Endpoints are more endpoints of the same Proxmox VE cluster (other
	// nodes), in the same forms as endpoint. Requests go to endpoint while it
	// answers; when it fails at the transport level (connection refused or
	// reset, TLS failure, timeout) they fail over to the next healthy one in
	// this order, and endpoint is used again once a background probe finds
	// it healthy. An HTTP answer, even an error, never causes a failover.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.all(e, e.matches('^\\\\S+$'))",message="each entry of endpoints must be a host, host:port or https URL without whitespace"
	// +kubebuilder:validation:XValidation:rule="self.all(e, self.exists_one(f, f == e))",message="endpoints must not list the same endpoint twice"
	// +optional
	Endpoints []string `json:"endpoints,omitempty"`

	// Username to log in with, including the realm (for example root@pam).
	// Requires password or passwordFrom.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Username string `json:"username,omitempty"`

	// Password of Username, inline. Prefer passwordFrom.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Password string `json:"password,omitempty"`

	// PasswordFrom reads the password of Username from a key of a Secret.
	// +optional
	PasswordFrom *SecretKeySelector `json:"passwordFrom,omitempty"`

	// TokenID of an API token, in the form user@realm!tokenname.
	// Requires secret or secretFrom.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^[^\\\\s@!:/]+@[A-Za-z][A-Za-z0-9._-]*![A-Za-z][A-Za-z0-9._-]*$')",message="tokenID must have the form user@realm!tokenname, for example root@pam!kubemox"
	// +optional
	TokenID string `json:"tokenID,omitempty"`

	// Secret of the API token TokenID, inline. Prefer secretFrom.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Secret string `json:"secret,omitempty"`

	// SecretFrom reads the secret of the API token TokenID from a key of a
	// Secret.
	// +optional
	SecretFrom *SecretKeySelector `json:"secretFrom,omitempty"`

	// InsecureSkipVerify skips verification of the server's certificate chain
	// and host name. Prefer caBundle or caFrom for self-signed certificates.
	// +kubebuilder:default=false
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`

	// CABundle is a PEM bundle of the certificate authorities to trust for the
	// endpoint, so a self-signed PVE certificate verifies without
	// insecureSkipVerify.
	// +kubebuilder:validation:MinLength=1
	// +optional
	CABundle string `json:"caBundle,omitempty"`

	// CAFrom reads a PEM bundle of trusted certificate authorities from a key
	// of a Secret. Same meaning as caBundle.
	// +optional
	CAFrom *SecretKeySelector `json:"caFrom,omitempty"`

	// MaxConcurrentRequests bounds the requests in flight to this Proxmox VE
	// cluster at any time. pveproxy runs few workers, so keep it small.
	// +kubebuilder:default=4
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	MaxConcurrentRequests int32 `json:"maxConcurrentRequests,omitempty"`

	// Adoption lets resources of another management cluster's guests adopt
	// them: a rebuilt management cluster takes over its predecessor's guests
	// instead of creating them again. Unset: only guests marked by this
	// management cluster are adopted.
	// +optional
	Adoption *AdoptionPolicy `json:"adoption,omitempty"`

	// AllowedNamespaces limits which namespaces' resources may use this
	// connection. Unset: resources of every namespace may.
	// +optional
	AllowedNamespaces *AllowedNamespaces `json:"allowedNamespaces,omitempty"`
}

// SecretRefs lists every Secret key this connection reads, in a stable order
// (password, token secret, CA bundle), so watches and status can be derived
// from one place.
func (s ProxmoxConnectionSpec) SecretRefs() []SecretKeySelector {
	refs := make([]SecretKeySelector, 0, 3)
	for _, ref := range []*SecretKeySelector{s.PasswordFrom, s.SecretFrom, s.CAFrom} {
		if ref != nil {
			refs = append(refs, *ref)
		}
	}
	return refs
}

// ObservedSecret is a Secret a connection reads a credential from, together
// with the resourceVersion it had when the credential was last read.
type ObservedSecret struct {
	// Name of the Secret.
	Name string `json:"name"`

	// Namespace of the Secret.
	Namespace string `json:"namespace"`

	// ResourceVersion the Secret had when its credential was read.
	ResourceVersion string `json:"resourceVersion"`
}

// ProxmoxConnectionStatus is the observed state of a ProxmoxConnection.
type ProxmoxConnectionStatus struct {
	// Conditions (Ready, with a reason such as Available or
	// AuthenticationFailed) and the number of managed resources using this
	// connection.
	xpv2.ProviderConfigStatus `json:",inline"`

	// ObservedSecrets are the Secrets this connection reads credentials from,
	// each with the resourceVersion the controller last read it at. A value
	// that differs from the Secret's current resourceVersion means a rotation
	// has not been picked up yet.
	// +listType=map
	// +listMapKey=namespace
	// +listMapKey=name
	// +optional
	ObservedSecrets []ObservedSecret `json:"observedSecrets,omitempty"`

	// Version of Proxmox VE reported by the endpoint.
	// +optional
	Version string `json:"version,omitempty"`

	// Endpoints is the health of each endpoint (endpoint first, then
	// endpoints), normalised, as the connection's client last saw it. A
	// connection with one endpoint lists it too.
	// +listType=atomic
	// +optional
	Endpoints []EndpointStatus `json:"endpoints,omitempty"`
}

// EndpointHealth says whether requests may go to an endpoint.
type EndpointHealth string

// Endpoint health values.
const (
	// EndpointHealthy endpoints take requests.
	EndpointHealthy EndpointHealth = "Healthy"
	// EndpointDown endpoints failed at the transport level (or rejected the
	// credential after a failover); they are probed in the background and
	// take no requests until a probe succeeds.
	EndpointDown EndpointHealth = "Down"
)

// EndpointStatus is the health of one endpoint of a connection.
type EndpointStatus struct {
	// URL is the normalised endpoint (https://host:port/api2/json).
	URL string `json:"url"`

	// Health is Healthy or Down.
	Health EndpointHealth `json:"health"`

	// Active is true for the endpoint requests go to now.
	// +optional
	Active bool `json:"active,omitempty"`

	// Message says why a Down endpoint is down (the transport error).
	// +optional
	Message string `json:"message,omitempty"`

	// LastTransitionTime is when Health last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=pxc,categories={crossplane,proxmox}
// +kubebuilder:printcolumn:name="ENDPOINT",type="string",JSONPath=".spec.endpoint"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="REASON",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].reason"
// +kubebuilder:printcolumn:name="VERSION",type="string",JSONPath=".status.version"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"

// A ProxmoxConnection is how managed resources reach a Proxmox VE cluster: the
// endpoint, the credential and TLS trust. It plays Crossplane's provider
// config role.
type ProxmoxConnection struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProxmoxConnectionSpec   `json:"spec"`
	Status ProxmoxConnectionStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ProxmoxConnectionList contains a list of ProxmoxConnection.
type ProxmoxConnectionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProxmoxConnection `json:"items"`
}
