package e2ereal

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/test/pveconformance"
)

// A CustomCertificate puts its certificate on the node the tester names
// (without restarting pveproxy, so the served certificate does not change)
// and removes it with the resource. A node that already has a custom
// certificate is left alone.
func TestCustomCertificateOnTheNamedNode(t *testing.T) {
	require(t)
	node := tg.Config().CertNode
	if node == "" {
		t.Skipf("needs a node whose custom certificate the suite may set and remove: set %s", pveconformance.EnvCertNode)
	}
	if fp := fingerprint(t, node); fp != "" {
		t.Skipf("node %s already has a custom certificate; the suite will not replace it", node)
	}
	cert, key, err := pveconformance.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	cc := &v1alpha1.CustomCertificate{ObjectMeta: metav1.ObjectMeta{Name: "cert", Namespace: h.Namespace(t, "e2e-real-")}, Spec: v1alpha1.CustomCertificateSpec{
		ResourceSpec:    v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		NodeName:        node,
		ProxmoxCertSpec: &v1alpha1.ProxmoxCertSpec{Certificate: cert, PrivateKey: key, NodeName: node},
	}}
	if err := h.Kube.Create(t.Context(), cc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Whatever happened, the node is left without a custom certificate.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if fp, _ := tg.CustomCertificateFingerprint(ctx, node); fp != "" {
			_, _ = tg.Raw(ctx, "DELETE", "/nodes/"+node+"/certificates/custom", pveconformance.Params("restart", "0"))
		}
	})
	h.WaitFor(t, cc, "Ready", wait, func() bool { return providertest.ReadyAndSynced(cc) })
	if fingerprint(t, node) == "" {
		t.Fatal("the node lists no custom certificate")
	}
	h.DeleteAndWait(t, cc, wait)
	if fingerprint(t, node) != "" {
		t.Error("the custom certificate survived its resource")
	}
}

func fingerprint(t *testing.T, node string) string {
	t.Helper()
	fp, err := tg.CustomCertificateFingerprint(t.Context(), node)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}
