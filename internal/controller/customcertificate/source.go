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

// Package customcertificate uploads the TLS certificate a Proxmox VE node's
// pveproxy serves, from the resource itself (kubemox's inline form), a TLS
// Secret, or a cert-manager Certificate the provider creates.
package customcertificate

import (
	"context"
	"fmt"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
)

// Keys of a kubernetes.io/tls Secret.
const (
	keyCertificate = "tls.crt"
	keyPrivateKey  = "tls.key"
)

// certManagerCertificate is cert-manager's Certificate kind.
var certManagerCertificate = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}

// certificate is what the spec asks the node to serve.
type certificate struct {
	ChainPEM, KeyPEM string
	// SecretName and SecretResourceVersion say which Secret revision it came
	// from ("" for the inline form).
	SecretName, SecretResourceVersion string
}

// wanted reads the certificate from the spec's source.
func wanted(ctx context.Context, kube client.Client, fresh client.Reader, cr *v1alpha1.CustomCertificate) (certificate, error) {
	s := &cr.Spec
	switch {
	case s.TLSSecretRef != nil:
		return fromSecret(ctx, fresh, cr.Namespace, s.TLSSecretRef.Name, "tlsSecretRef")
	case s.CertManagerSpec != nil:
		return fromCertManager(ctx, kube, fresh, cr)
	case s.ProxmoxCertSpec != nil:
		return certificate{ChainPEM: s.ProxmoxCertSpec.Certificate, KeyPEM: s.ProxmoxCertSpec.PrivateKey}, nil
	default:
		return certificate{}, errors.New("no certificate source: set tlsSecretRef, certManagerSpec or proxmoxCertSpec")
	}
}

// fromCertManager writes the cert-manager Certificate when this generation
// of the spec has not been written yet, then reads the Secret cert-manager
// issues into. A missing Secret writes the Certificate again (someone may
// have deleted it), so a poll costs one Secret read and nothing more.
func fromCertManager(ctx context.Context, kube client.Client, fresh client.Reader, cr *v1alpha1.CustomCertificate) (certificate, error) {
	if cr.Status.CertificateGeneration != cr.Generation {
		if err := writeCertManagerCertificate(ctx, kube, cr); err != nil {
			return certificate{}, err
		}
	}
	want, err := fromSecret(ctx, fresh, cr.Namespace, cr.Spec.CertManagerSpec.SecretName, "certManagerSpec.secretName")
	if errors.Is(err, errSecretMissing) && cr.Status.CertificateGeneration == cr.Generation {
		if werr := writeCertManagerCertificate(ctx, kube, cr); werr != nil {
			return certificate{}, werr
		}
	}
	return want, err
}

// writeCertManagerCertificate ensures the Certificate and records the
// generation it was written from.
func writeCertManagerCertificate(ctx context.Context, kube client.Client, cr *v1alpha1.CustomCertificate) error {
	if err := ensureCertManagerCertificate(ctx, kube, cr); err != nil {
		return err
	}
	cr.Status.CertificateGeneration = cr.Generation
	return nil
}

// errSecretMissing is the cause of fromSecret's error when the Secret does
// not exist.
var errSecretMissing = errors.New("does not exist (yet)")

// fromSecret reads tls.crt and tls.key of a Secret straight from the API
// server; errors name the Secret and the field that names it, never data.
func fromSecret(ctx context.Context, fresh client.Reader, ns, name, field string) (certificate, error) {
	r := secrets.NewReader(fresh)
	nn := types.NamespacedName{Namespace: ns, Name: name}
	crt, err := r.Key(ctx, nn, keyCertificate)
	if err == nil {
		var key secrets.Key
		key, err = r.Key(ctx, nn, keyPrivateKey)
		if err == nil {
			return certificate{ChainPEM: string(crt.Value), KeyPEM: string(key.Value), SecretName: name, SecretResourceVersion: crt.ResourceVersion}, nil
		}
	}
	switch {
	case kerrors.IsNotFound(err):
		return certificate{}, errors.Wrapf(errSecretMissing, "Secret %s/%s named by %s", ns, name, field)
	case errors.Is(err, secrets.ErrKeyNotFound):
		return certificate{}, errors.Errorf("Secret %s/%s named by %s needs the keys %s and %s", ns, name, field, keyCertificate, keyPrivateKey)
	default:
		return certificate{}, errors.Wrapf(err, "cannot read Secret %s/%s named by %s", ns, name, field)
	}
}

// ensureCertManagerCertificate creates (or updates) the cert-manager
// Certificate of the resource's name, owned by it. Crossplane grants a
// provider no access to cert-manager's API: the error says what to grant.
func ensureCertManagerCertificate(ctx context.Context, kube client.Client, cr *v1alpha1.CustomCertificate) error {
	c := &unstructured.Unstructured{}
	c.SetGroupVersionKind(certManagerCertificate)
	c.SetNamespace(cr.Namespace)
	c.SetName(cr.Name)
	_, err := controllerutil.CreateOrUpdate(ctx, kube, c, func() error {
		if err := controllerutil.SetControllerReference(cr, c, kube.Scheme()); err != nil {
			return err
		}
		return unstructured.SetNestedMap(c.Object, certManagerSpecOf(cr.Spec.CertManagerSpec), "spec")
	})
	switch {
	case err == nil:
		return nil
	case meta.IsNoMatchError(err), kerrors.IsNotFound(err):
		// No mapping for the kind, or (a mapping cached before the CRD went)
		// the API server knows no such resource.
		return errors.New("certManagerSpec: cert-manager's Certificate kind (cert-manager.io/v1) is not served in this cluster: install cert-manager, or use tlsSecretRef")
	case kerrors.IsForbidden(err):
		return errors.New("certManagerSpec: the provider may not manage cert-manager Certificates: bind its ServiceAccount to the ClusterRole provider-proxmox-cert-manager (docs/kinds/customcertificate.md)")
	default:
		return errors.Wrap(err, "cannot create the cert-manager Certificate")
	}
}

func certManagerSpecOf(s *v1alpha1.CertManagerSpec) map[string]any {
	spec := map[string]any{"secretName": s.SecretName}
	if s.CommonName != "" {
		spec["commonName"] = s.CommonName
	}
	if len(s.DNSNames) > 0 {
		spec["dnsNames"] = toAny(s.DNSNames)
	}
	if len(s.Usages) > 0 {
		spec["usages"] = toAny(s.Usages)
	}
	issuer := map[string]any{"name": s.IssuerRef.Name}
	if s.IssuerRef.Kind != "" {
		issuer["kind"] = s.IssuerRef.Kind
	}
	if s.IssuerRef.Group != "" {
		issuer["group"] = s.IssuerRef.Group
	}
	spec["issuerRef"] = issuer
	return spec
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// inlineKeyWarning is the message of the InlinePrivateKey condition.
func inlineKeyWarning(cr *v1alpha1.CustomCertificate) string {
	return fmt.Sprintf("proxmoxCertSpec.privateKey is stored in CustomCertificate %s/%s, readable by anyone who can read it: "+
		"move the certificate and key into a kubernetes.io/tls Secret and set tlsSecretRef", cr.Namespace, cr.Name)
}
