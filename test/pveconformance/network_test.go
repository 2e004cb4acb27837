package pveconformance

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// GET /nodes/{node}/network lists the node's uplink and bridges, filtered
// by type (pve-manager PVE/API2/Network.pm index: any_bridge is bridges and
// OVS bridges; a bridge row carries its bridge_ports).
func TestNodeNetworkListing(t *testing.T) {
	tg := target(t, pvesim.Options{})
	sim := tg.requireSim("needs a node whose interfaces the case fixes (an uplink and two bridges)")
	covers(tg, "GET /nodes/{node}/network type")
	if err := sim.AddBridge(tg.Node(), "vmbr1"); err != nil {
		t.Fatal(err)
	}
	path := "/nodes/" + url.PathEscape(tg.Node()) + "/network"
	var all, bridges []map[string]any
	tg.data(path, nil, &all)
	tg.data(path, Params("type", "any_bridge"), &bridges)
	got := map[string]any{}
	for _, n := range all {
		got[n["iface"].(string)] = n["type"]
	}
	if len(all) != 3 || got["eno1"] != "eth" || got["vmbr0"] != "bridge" || got["vmbr1"] != "bridge" {
		t.Errorf("all interfaces: %v", got)
	}
	if len(bridges) != 2 || bridges[0]["iface"] != "vmbr0" || bridges[0]["bridge_ports"] != "eno1" || bridges[1]["iface"] != "vmbr1" {
		t.Errorf("bridges: %v", bridges)
	}
}

// A VM whose second NIC names a bridge the node lacks fails to start: the NIC's tap
// is plugged while QEMU starts, pve-common src/PVE/Network.pm
// read_bridge_mtu dies "bridge '$bridge' does not exist", QEMU exits, and
// qemu-server src/PVE/QemuServer.pm vm_start_nolock dies "start failed:
// QEMU exited with code $exitcode": the exit status says only that QEMU
// exited, the log says why. The VM stays stopped.
func TestStartFailsOnMissingBridge(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/status/start")
	id := tg.createVM("nobridge", "net1", "virtio,bridge=pvecf9")
	res := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/status/start"), nil)
	if res.Status != http.StatusOK {
		t.Fatalf("start: %s %s", res.StatusLine, res.Text)
	}
	if exit := tg.task(res.UPID()); exit != "start failed: QEMU exited with code 1" {
		t.Errorf("exit status %q", exit)
	}
	if log := tg.taskLog(res.UPID()); !logHas(log, "bridge 'pvecf9' does not exist") {
		t.Errorf("log: %q", log)
	}
	var cur map[string]any
	tg.data(tg.guestPath("qemu", id, "/status/current"), nil, &cur)
	if cur["status"] != "stopped" {
		t.Errorf("status %v after a failed start (VM %s)", cur["status"], strconv.Itoa(id))
	}
}
