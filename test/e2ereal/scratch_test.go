package e2ereal

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// A VirtualMachine from scratch with cloud-init, its password from a
// Secret: the guest carries the cloud-init keys (the password masked, as
// PVE shows it) and goes with its resource.
func TestScratchWithCloudInit(t *testing.T) {
	require(t)
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "scratch"}, Spec: v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		Name:         tg.GuestName("scratch"), NodeName: tg.Node(),
		VMSpec: &v1alpha1.VirtualMachineScratchSpec{
			VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Socket: 1, Memory: 512,
				Disk:    []v1alpha1.VirtualMachineDisk{{Storage: tg.Storage(), Size: 1, Device: "scsi0"}},
				Network: []v1alpha1.VirtualMachineNetwork{{Model: "virtio", Bridge: "vmbr0"}}},
			CloudInitConfig: &v1alpha1.CloudInitConfig{User: "ops", PasswordFrom: &v1alpha1.OptionalSecretKeySelector{LocalSecretKeySelector: v1alpha1.LocalSecretKeySelector{Name: "ci", Key: "pw"}},
				DNSDomain: "example.test", IPConfig: &v1alpha1.IPConfig{IP: "192.0.2.10", CIDR: "24", Gateway: "192.0.2.1"}},
		},
	}}
	vm.Spec.PowerState = v1alpha1.PowerStateStopped
	vmid := guestObject(t, vm)
	if err := h.Kube.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: vm.Namespace, Name: "ci"},
		StringData: map[string]string{"pw": "e2e-real-not-a-secret"}}); err != nil {
		t.Fatal(err)
	}
	if err := h.Kube.Create(t.Context(), vm); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, vm, "Ready", wait, func() bool { return providertest.ReadyAndSynced(vm) })
	var cfg map[string]any
	raw(t, guestPath("qemu", vmid, "/config"), &cfg)
	if cfg["ciuser"] != "ops" || cfg["ipconfig0"] != "ip=192.0.2.10/24,gw=192.0.2.1" || cfg["searchdomain"] != "example.test" || cfg["cipassword"] != "**********" {
		t.Errorf("cloud-init keys: ciuser=%v ipconfig0=%v searchdomain=%v cipassword=%v", cfg["ciuser"], cfg["ipconfig0"], cfg["searchdomain"], cfg["cipassword"])
	}
	h.DeleteAndWait(t, vm, wait)
	if exists(t, vmid) {
		t.Errorf("guest %d survived its resource", vmid)
	}
}
