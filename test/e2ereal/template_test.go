package e2ereal

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/test/pveconformance"
)

// A VirtualMachineTemplate downloads its cloud image (named with the
// suite's prefix, so cleanup finds it), imports it and ends as a PVE
// template; it goes with its resource.
func TestVirtualMachineTemplateFromImage(t *testing.T) {
	require(t)
	src := tg.Config().ImageURL
	if src == "" {
		t.Skipf("needs a cloud image (.qcow2) the node can download: set %s", pveconformance.EnvImageURL)
	}
	cr := &v1alpha1.VirtualMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "tmpl"}, Spec: v1alpha1.VirtualMachineTemplateSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		Name:         tg.GuestName("tmpl"), NodeName: tg.Node(),
		ImageConfig: v1alpha1.DownloadParameters{Content: "import", Filename: pveconformance.Prefix + tg.RunID() + "-image.qcow2",
			Node: tg.Node(), Storage: tg.ContentStorage(), URL: src},
		CloudInitConfig: &v1alpha1.CloudInitConfig{User: "ops"},
	}}
	storage := tg.Storage()
	cr.Spec.VirtualMachineConfig.Storage = &storage
	vmid := guestObject(t, cr)
	if err := h.Kube.Create(t.Context(), cr); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, cr, "Ready", wait, func() bool { return providertest.ReadyAndSynced(cr) })
	var cfg map[string]any
	raw(t, guestPath("qemu", vmid, "/config"), &cfg)
	if cfg["template"] != float64(1) || cfg["name"] != tg.GuestName("tmpl") {
		t.Errorf("template config: template=%v name=%v", cfg["template"], cfg["name"])
	}
	h.DeleteAndWait(t, cr, wait)
	if exists(t, vmid) {
		t.Errorf("template %d survived its resource", vmid)
	}
}
