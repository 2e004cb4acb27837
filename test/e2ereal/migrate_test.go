package e2ereal

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/test/pveconformance"
)

// Changing a running VirtualMachine's nodeName migrates it live, its local
// disk along, to the node the tester names.
func TestNodeNameChangeMigrates(t *testing.T) {
	require(t)
	to := tg.Config().MigrateNode
	if to == "" {
		t.Skipf("needs a second node with storage %s: set %s", tg.Storage(), pveconformance.EnvMigrateNode)
	}
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "mover"}, Spec: v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		Name:         tg.GuestName("mover"), NodeName: tg.Node(),
		VMSpec: &v1alpha1.VirtualMachineScratchSpec{VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Socket: 1, Memory: 512,
			Disk:    []v1alpha1.VirtualMachineDisk{{Storage: tg.Storage(), Size: 1, Device: "scsi0"}},
			Network: []v1alpha1.VirtualMachineNetwork{{Model: "virtio", Bridge: "vmbr0"}}}},
	}}
	vm.Spec.PowerState = v1alpha1.PowerStateRunning
	vmid := guestObject(t, vm)
	if err := h.Kube.Create(t.Context(), vm); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, vm, "Ready", wait, func() bool { return providertest.ReadyAndSynced(vm) })
	vm.Spec.NodeName = to
	if err := h.Kube.Update(t.Context(), vm); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, vm, "migrated", wait, func() bool {
		lm := vm.Status.LastMigration
		return lm != nil && lm.Result == v1alpha1.MigrationSucceeded && vm.Status.Status.Node == to
	})
	for _, g := range mustGuests(t) {
		if g.VMID == vmid && g.Node != to {
			t.Errorf("guest %d on %s after the migration, want %s", vmid, g.Node, to)
		}
	}
	h.DeleteAndWait(t, vm, wait)
}

func mustGuests(t *testing.T) []pveconformance.Guest {
	t.Helper()
	gs, err := tg.GuestsInRange(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return gs
}
