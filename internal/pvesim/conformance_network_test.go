package pvesim_test

import (
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// GET /nodes/{node}/network lists the node's uplink and bridges, filtered by type, in a
// shape go-proxmox decodes.
func TestNodeNetworkListing(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddBridge("pve", "vmbr1"); err != nil {
		t.Fatal(err)
	}
	node := nodeOf(t, tokenClient(t, sim), "pve")
	all, err := node.Networks(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	bridges, err := node.Networks(testCtx(t), "any_bridge")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range all {
		got[n.Iface] = n.Type
	}
	if len(all) != 3 || got["eno1"] != "eth" || got["vmbr0"] != "bridge" || got["vmbr1"] != "bridge" {
		t.Errorf("all interfaces: %v", got)
	}
	if len(bridges) != 2 || bridges[0].Iface != "vmbr0" || bridges[0].BridgePorts != "eno1" || bridges[1].Iface != "vmbr1" {
		t.Errorf("bridges: %+v", bridges)
	}
}

// A VM whose NIC names a bridge the node lacks fails to start as QEMU does: the exit
// status says only that QEMU exited, the log says why.
func TestStartFailsOnMissingBridge(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: "pve", VMID: 120, Config: map[string]string{"net0": "virtio,bridge=vmbr9"}}); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	task, err := vmOf(t, c, "pve", 120).Start(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	wantTaskFailure(t, c, task, "start failed: QEMU exited with code 1")
	log, err := task.Log(testCtx(t), 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	if log[1] != "bridge 'vmbr9' does not exist" {
		t.Errorf("log: %v", log)
	}
	if g, _ := sim.Guest(120); g.Status != pvesim.StatusStopped {
		t.Errorf("status %q after a failed start", g.Status)
	}
}
