package e2ereal

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/test/pveconformance"
)

// guestObject is a managed resource of this run: in a fresh namespace, its
// external name a VMID of the range, so the provider creates it there.
func guestObject(t *testing.T, obj client.Object) int {
	t.Helper()
	vmid, err := tg.AllocVMID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(h.Namespace(t, "e2e-real-"))
	meta.SetExternalName(obj, strconv.Itoa(vmid))
	return vmid
}

// raw reads path's data from the target, failing t on anything but 200.
func raw(t *testing.T, path string, v any) {
	t.Helper()
	res, err := tg.Raw(t.Context(), http.MethodGet, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusOK {
		t.Fatalf("GET %s: %s", path, res.StatusLine)
	}
	if err := res.Data(v); err != nil {
		t.Fatal(err)
	}
}

func guestPath(kind string, vmid int, rest string) string {
	return "/nodes/" + url.PathEscape(tg.Node()) + "/" + kind + "/" + strconv.Itoa(vmid) + rest
}

// status is the guest's power status as PVE reports it.
func status(t *testing.T, kind string, vmid int) string {
	t.Helper()
	var st struct {
		Status string `json:"status"`
	}
	raw(t, guestPath(kind, vmid, "/status/current"), &st)
	return st.Status
}

// exists reports whether a guest is at vmid.
func exists(t *testing.T, vmid int) bool {
	t.Helper()
	for _, g := range mustGuests(t) {
		if g.VMID == vmid {
			return true
		}
	}
	return false
}

// templateName is the name of the QEMU template clones come from.
func templateName(t *testing.T) string {
	t.Helper()
	id := tg.Config().TemplateVMID
	if id == 0 {
		t.Skipf("needs a QEMU template: set %s", pveconformance.EnvTemplateVMID)
	}
	var cfg struct {
		Name string `json:"name"`
	}
	raw(t, guestPath("qemu", id, "/config"), &cfg)
	return cfg.Name
}

// A VirtualMachine cloned from the template runs with the spec's hardware,
// stops when powerState says so, and is destroyed with the resource.
func TestVirtualMachineCloneAndPower(t *testing.T) {
	require(t)
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "clone"}, Spec: v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		Name:         tg.GuestName("clone"), NodeName: tg.Node(),
		Template: &v1alpha1.VirtualMachineCloneSpec{Name: templateName(t), VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 2, Memory: 1024}},
	}}
	vm.Spec.PowerState = v1alpha1.PowerStateRunning
	vmid := guestObject(t, vm)
	if err := h.Kube.Create(t.Context(), vm); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, vm, "Ready", wait, func() bool { return providertest.ReadyAndSynced(vm) })
	var cfg map[string]any
	raw(t, guestPath("qemu", vmid, "/config"), &cfg)
	if cfg["cores"] != float64(2) || cfg["memory"] != "1024" || cfg["name"] != tg.GuestName("clone") {
		t.Errorf("clone config: cores=%v memory=%v name=%v", cfg["cores"], cfg["memory"], cfg["name"])
	}
	if s := status(t, "qemu", vmid); s != "running" {
		t.Errorf("powerState Running, guest %s", s)
	}
	vm.Spec.PowerState = v1alpha1.PowerStateStopped
	if err := h.Kube.Update(t.Context(), vm); err != nil {
		t.Fatal(err)
	}
	providertest.Eventually(t, wait, time.Second, func() bool { return status(t, "qemu", vmid) == "stopped" },
		func() string { return "the guest did not stop" })
	h.DeleteAndWait(t, vm, wait)
	if exists(t, vmid) {
		t.Errorf("guest %d survived its resource", vmid)
	}
}

// A Container from the target's template archive runs and is destroyed
// with the resource.
func TestContainerFromTemplate(t *testing.T) {
	require(t)
	tmpl := tg.Config().CTTemplate
	if tmpl == "" {
		t.Skipf("needs a container template: set %s", pveconformance.EnvCTTemplate)
	}
	ct := &v1alpha1.Container{ObjectMeta: metav1.ObjectMeta{Name: "ct"}, Spec: v1alpha1.ContainerSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		Name:         tg.GuestName("ct"), NodeName: tg.Node(),
		Template: &v1alpha1.ContainerTemplate{OSTemplate: tmpl, Cores: 1, Memory: 256,
			Disk:    []v1alpha1.ContainerDisk{{Storage: tg.Storage(), Size: 2}},
			Network: []v1alpha1.ContainerNetwork{{Model: "virtio", Bridge: "vmbr0", IP: "dhcp"}}},
	}}
	ct.Spec.PowerState = v1alpha1.PowerStateRunning
	vmid := guestObject(t, ct)
	if err := h.Kube.Create(context.Background(), ct); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, ct, "Ready", wait, func() bool { return providertest.ReadyAndSynced(ct) })
	if s := status(t, "lxc", vmid); s != "running" {
		t.Errorf("powerState Running, container %s", s)
	}
	h.DeleteAndWait(t, ct, wait)
	if exists(t, vmid) {
		t.Errorf("container %d survived its resource", vmid)
	}
}
