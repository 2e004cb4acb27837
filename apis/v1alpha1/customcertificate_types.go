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
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// CertManagerSpec asks cert-manager for the certificate (kubemox's field): the
// provider creates a cert-manager Certificate of the resource's name that
// writes secretName, and uploads what it holds.
type CertManagerSpec struct {
	// +optional
	CommonName string `json:"commonName,omitempty"`
	// +optional
	DNSNames []string `json:"dnsNames,omitempty"`
	// +optional
	IssuerRef IssuerRef `json:"issuerRef,omitempty"`
	// SecretName is the Secret cert-manager writes, in this namespace.
	// +kubebuilder:validation:MinLength=1
	SecretName string `json:"secretName"`
	// +optional
	Usages []string `json:"usages,omitempty"`
}

// IssuerRef names a cert-manager issuer.
type IssuerRef struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Group string `json:"group,omitempty"`
}

// ProxmoxCertSpec is kubemox's inline certificate. A private key here is
// stored in the resource for anyone who can read it: prefer tlsSecretRef.
type ProxmoxCertSpec struct {
	// Certificate is the PEM chain, leaf first.
	// +optional
	Certificate string `json:"certificate,omitempty"`
	// PrivateKey is the PEM key (a warning condition recommends
	// tlsSecretRef).
	// +optional
	PrivateKey string `json:"privateKey,omitempty"`
	// NodeName is the node, when spec.nodeName is not set.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// Force replaces a custom certificate the node has already, on the first
	// upload (later uploads replace the provider's own certificate anyway).
	// +optional
	Force bool `json:"force,omitempty"`
	// RestartProxy restarts pveproxy so the node serves the certificate at
	// once.
	// +optional
	RestartProxy bool `json:"restartProxy,omitempty"`
}

// SecretName names a Secret in the resource's namespace.
type SecretName struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// CustomCertificateSpec is the desired state of a CustomCertificate.
//
// +kubebuilder:validation:XValidation:rule="has(self.nodeName) || (has(self.proxmoxCertSpec) && has(self.proxmoxCertSpec.nodeName))",message="nodeName (or proxmoxCertSpec.nodeName) is required: the node whose pveproxy serves the certificate"
// +kubebuilder:validation:XValidation:rule="[has(self.proxmoxCertSpec) && has(self.proxmoxCertSpec.certificate), has(self.tlsSecretRef), has(self.certManagerSpec)].filter(x, x).size() == 1",message="exactly one certificate source: proxmoxCertSpec.certificate, tlsSecretRef or certManagerSpec"
// +kubebuilder:validation:XValidation:rule="!has(self.proxmoxCertSpec) || has(self.proxmoxCertSpec.certificate) == has(self.proxmoxCertSpec.privateKey)",message="proxmoxCertSpec.certificate and proxmoxCertSpec.privateKey go together"
// +kubebuilder:validation:XValidation:rule="!has(self.nodeName) || !has(self.proxmoxCertSpec) || !has(self.proxmoxCertSpec.nodeName) || self.nodeName == self.proxmoxCertSpec.nodeName",message="nodeName and proxmoxCertSpec.nodeName must name the same node when both are set"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.nodeName) || self.nodeName == oldSelf.nodeName",message="nodeName is immutable: create another CustomCertificate for another node"
type CustomCertificateSpec struct {
	// The connection, management policies and connection-detail Secret.
	ResourceSpec `json:",inline"`

	// NodeName is the node whose pveproxy gets the certificate. It is the
	// resource's external name.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// ProxmoxCertSpec is kubemox's inline certificate and key.
	// +optional
	ProxmoxCertSpec *ProxmoxCertSpec `json:"proxmoxCertSpec,omitempty"`

	// TLSSecretRef names a kubernetes.io/tls Secret in this namespace
	// (tls.crt, tls.key, as cert-manager writes them). It is read straight
	// from the API server and watched, so a renewed certificate is uploaded
	// at once.
	// +optional
	TLSSecretRef *SecretName `json:"tlsSecretRef,omitempty"`

	// CertManagerSpec has cert-manager issue the certificate.
	// +optional
	CertManagerSpec *CertManagerSpec `json:"certManagerSpec,omitempty"`

	// DeletionProtection keeps the custom certificate on the node when this
	// resource is deleted.
	// +optional
	DeletionProtection bool `json:"deletionProtection,omitempty"`
}

// Node is the node the certificate is for.
func (s *CustomCertificateSpec) Node() string {
	if s.NodeName != "" || s.ProxmoxCertSpec == nil {
		return s.NodeName
	}
	return s.ProxmoxCertSpec.NodeName
}

// RestartsProxy reports whether uploads and deletion restart pveproxy.
func (s *CustomCertificateSpec) RestartsProxy() bool {
	return s.ProxmoxCertSpec != nil && s.ProxmoxCertSpec.RestartProxy
}

// CustomCertificateStatus is the observed state of a CustomCertificate.
type CustomCertificateStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	PollStatus                 `json:",inline"`
	// Fingerprint (SHA-256) of the custom certificate the node has.
	// +optional
	Fingerprint string `json:"fingerprint,omitempty"`
	// Subject of that certificate.
	// +optional
	Subject string `json:"subject,omitempty"`
	// NotAfter is when it expires.
	// +optional
	NotAfter *metav1.Time `json:"notAfter,omitempty"`
	// SecretResourceVersion is the revision of the TLS Secret last uploaded.
	// +optional
	SecretResourceVersion string `json:"secretResourceVersion,omitempty"`
	// CertificateGeneration is the metadata.generation whose certManagerSpec
	// the cert-manager Certificate was last written from: the Certificate is
	// written again only when the spec changes or its Secret is missing.
	// +optional
	CertificateGeneration int64 `json:"certificateGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=cc,categories={crossplane,managed,proxmox}
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="EXPIRES",type="string",JSONPath=".status.notAfter",description="When the certificate expires (RFC 3339). A string column: kubectl prints a date column as the age, <invalid> for a time still to come"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="NEXT-CHECK",type="string",JSONPath=".status.nextCheckTime",priority=1

// A CustomCertificate is the TLS certificate a Proxmox VE node's pveproxy
// serves (POST /nodes/{node}/certificates/custom). Its external name is the
// node.
type CustomCertificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CustomCertificateSpec   `json:"spec"`
	Status CustomCertificateStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CustomCertificateList contains a list of CustomCertificate.
type CustomCertificateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CustomCertificate `json:"items"`
}

// CustomCertificate type metadata.
var (
	CustomCertificateKind             = reflect.TypeFor[CustomCertificate]().Name()
	CustomCertificateGroupKind        = schema.GroupKind{Group: Group, Kind: CustomCertificateKind}.String()
	CustomCertificateGroupVersionKind = SchemeGroupVersion.WithKind(CustomCertificateKind)
)

func init() {
	SchemeBuilder.Register(&CustomCertificate{}, &CustomCertificateList{})
}
