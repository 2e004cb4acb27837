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

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/customcertificate"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

func nodeCustomFingerprint(t *testing.T, hs *harness, node string) string {
	t.Helper()
	cl, err := pve.New(pve.Config{Endpoint: hs.Sim.URL(), TokenID: tokenID, Secret: currentSecret, CAPEM: hs.Sim.CAPEM()})
	if err != nil {
		t.Fatal(err)
	}
	infos, err := cl.Certificates(context.Background(), node)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range infos {
		if i.Filename == pve.CustomCertificateFile {
			return i.Fingerprint
		}
	}
	return ""
}

func waitFingerprint(t *testing.T, hs *harness, node, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for nodeCustomFingerprint(t, hs, node) != want {
		if time.Now().After(deadline) {
			t.Fatalf("node %s's custom certificate is %q after %s, want %q", node, nodeCustomFingerprint(t, hs, node), within, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A certificate from a TLS Secret is uploaded; a renewal of the Secret is
// uploaded within seconds (the metadata watch, not the poll); deleting the
// resource removes it from the node.
func TestCustomCertificateFromTLSSecret(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	ctx := context.Background()
	crt, key := providertest.SelfSignedPair(t, node+".example")
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pve-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte(crt), "tls.key": []byte(key)}}
	if err := hs.Kube.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	cc := &v1alpha1.CustomCertificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pve-cert"}, Spec: v1alpha1.CustomCertificateSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		NodeName:     node, TLSSecretRef: &v1alpha1.SecretName{Name: "pve-tls"},
	}}
	if err := hs.Kube.Create(ctx, cc); err != nil {
		t.Fatal(err)
	}
	fp, err := pve.Fingerprint(crt)
	if err != nil {
		t.Fatal(err)
	}
	waitFingerprint(t, hs, node, fp, wait)
	cc = waitCC(t, hs, ns, cc.Name, "Ready with the fingerprint", func(c *v1alpha1.CustomCertificate) bool {
		return c.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue && c.Status.Fingerprint == fp
	})
	if c := cc.GetCondition(customcertificate.TypeInlinePrivateKey); c.Status == corev1.ConditionTrue {
		t.Errorf("a Secret-backed certificate is flagged: %+v", c)
	}

	renewed, renewedKey := providertest.SelfSignedPair(t, node+".example")
	sec.Data = map[string][]byte{"tls.crt": []byte(renewed), "tls.key": []byte(renewedKey)}
	if err := hs.Kube.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	renewedFP, _ := pve.Fingerprint(renewed)
	waitFingerprint(t, hs, node, renewedFP, poll/2) // well within one poll interval

	if err := hs.Kube.Delete(ctx, cc); err != nil {
		t.Fatal(err)
	}
	waitFingerprint(t, hs, node, "", wait)
}

// kubemox's inline form works, with a warning condition and event about the
// key; cert-manager's form says what is missing when cert-manager is absent.
func TestCustomCertificateInlineAndCertManager(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	ctx := context.Background()
	crt, key := providertest.SelfSignedPair(t, "othernode.example")
	inline := &v1alpha1.CustomCertificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "inline"}, Spec: v1alpha1.CustomCertificateSpec{
		ResourceSpec:    v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		ProxmoxCertSpec: &v1alpha1.ProxmoxCertSpec{Certificate: crt, PrivateKey: key, NodeName: "othernode"},
	}}
	if err := hs.Kube.Create(ctx, inline); err != nil {
		t.Fatal(err)
	}
	fp, _ := pve.Fingerprint(crt)
	waitFingerprint(t, hs, "othernode", fp, wait)
	got := waitCC(t, hs, ns, "inline", "warned about its key", func(c *v1alpha1.CustomCertificate) bool {
		return c.GetCondition(customcertificate.TypeInlinePrivateKey).Status == corev1.ConditionTrue
	})
	if msg := got.GetCondition(customcertificate.TypeInlinePrivateKey).Message; !strings.Contains(msg, "tlsSecretRef") || strings.Contains(msg, "PRIVATE KEY") {
		t.Errorf("warning %q: want advice, never the key", msg)
	}
	hs.WaitEvent(t, ns, "inline", "InlinePrivateKey", wait)

	cm := &v1alpha1.CustomCertificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "issued"}, Spec: v1alpha1.CustomCertificateSpec{
		ResourceSpec:    v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		NodeName:        "othernode",
		CertManagerSpec: &v1alpha1.CertManagerSpec{SecretName: "issued-tls", CommonName: "othernode.example", IssuerRef: v1alpha1.IssuerRef{Name: "ca"}},
	}}
	if err := hs.Kube.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitCC(t, hs, ns, "issued", "explaining that cert-manager is missing", func(c *v1alpha1.CustomCertificate) bool {
		s := c.GetCondition(xpv2.TypeSynced)
		return s.Status == corev1.ConditionFalse && strings.Contains(s.Message, "cert-manager's Certificate kind (cert-manager.io/v1) is not served")
	})
	if got := nodeCustomFingerprint(t, hs, "othernode"); got != fp {
		t.Errorf("the failing resource changed the node's certificate: %q", got)
	}
	// The node is shared with the next test: leave it without a custom one.
	for _, c := range []*v1alpha1.CustomCertificate{cm, inline} {
		if err := hs.Kube.Delete(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	waitFingerprint(t, hs, "othernode", "", wait)
}

func waitCC(t *testing.T, hs *harness, ns, name, what string, cond func(*v1alpha1.CustomCertificate) bool) *v1alpha1.CustomCertificate {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		c := &v1alpha1.CustomCertificate{}
		err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, c)
		if err == nil && cond(c) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("CustomCertificate %s never %s: %+v, %v", name, what, c.Status, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// certManagerCRD is the smallest cert-manager Certificate CRD: what the
// provider creates must be accepted by it; cert-manager itself does not run
// here, the test writes the Secret it would.
func certManagerCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "certificates.cert-manager.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "cert-manager.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "certificates", Singular: "certificate", Kind: "Certificate", ListKind: "CertificateList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
}

// With cert-manager's Certificate kind served, certManagerSpec makes a
// Certificate of the resource's name, owned by it, writing secretName; what
// cert-manager then writes there is uploaded. The CRD goes again at the end.
func TestCustomCertificateWithCertManager(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	ctx := context.Background()
	crd := certManagerCRD()
	if err := hs.Kube.Create(ctx, crd); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hs.Kube.Delete(context.Background(), crd) })
	cc := &v1alpha1.CustomCertificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "issued"}, Spec: v1alpha1.CustomCertificateSpec{
		ResourceSpec:    v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		NodeName:        "othernode",
		CertManagerSpec: &v1alpha1.CertManagerSpec{SecretName: "issued-tls", CommonName: "othernode.example", DNSNames: []string{"othernode.example"}, IssuerRef: v1alpha1.IssuerRef{Name: "ca", Kind: "ClusterIssuer"}},
	}}
	if err := hs.Kube.Create(ctx, cc); err != nil {
		t.Fatal(err)
	}
	crt := waitCertificate(t, hs, ns, "issued", "made", func(*unstructured.Unstructured) bool { return true })
	secretName, _, _ := unstructured.NestedString(crt.Object, "spec", "secretName")
	issuer, _, _ := unstructured.NestedString(crt.Object, "spec", "issuerRef", "name")
	if secretName != "issued-tls" || issuer != "ca" || len(crt.GetOwnerReferences()) != 1 || crt.GetOwnerReferences()[0].Name != "issued" {
		t.Errorf("Certificate %v: want secretName issued-tls, issuer ca, owned by the CustomCertificate", crt.Object)
	}

	issued, key := providertest.SelfSignedPair(t, "othernode.example")
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "issued-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte(issued), "tls.key": []byte(key)}}
	if err := hs.Kube.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	fp, _ := pve.Fingerprint(issued)
	waitFingerprint(t, hs, "othernode", fp, wait)

	// A spec change writes the Certificate again, once per generation.
	got := waitCC(t, hs, ns, "issued", "recorded the generation it wrote", func(c *v1alpha1.CustomCertificate) bool {
		return c.Status.CertificateGeneration == c.Generation
	})
	got.Spec.CertManagerSpec.DNSNames = []string{"othernode.example", "pve2.example"}
	if err := hs.Kube.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitCertificate(t, hs, ns, "issued", "with the new dnsNames", func(c *unstructured.Unstructured) bool {
		names, _, _ := unstructured.NestedStringSlice(c.Object, "spec", "dnsNames")
		return len(names) == 2 && names[1] == "pve2.example"
	})
	// Certificate and Secret deleted by hand: the missing Secret makes the
	// provider write the Certificate again, so cert-manager can issue anew.
	if err := hs.Kube.Delete(ctx, crt); err != nil {
		t.Fatal(err)
	}
	if err := hs.Kube.Delete(ctx, sec); err != nil {
		t.Fatal(err)
	}
	waitCertificate(t, hs, ns, "issued", "written again after it was deleted", func(c *unstructured.Unstructured) bool {
		return c.GetUID() != crt.GetUID()
	})

	if err := hs.Kube.Delete(ctx, cc); err != nil {
		t.Fatal(err)
	}
	waitFingerprint(t, hs, "othernode", "", wait)
}

// waitCertificate waits for the cert-manager Certificate ns/name to exist
// and satisfy cond.
func waitCertificate(t *testing.T, hs *harness, ns, name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		c := &unstructured.Unstructured{}
		c.SetGroupVersionKind(schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"})
		err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, c)
		if err == nil && cond(c) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("cert-manager Certificate %s never %s: %v", name, what, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
