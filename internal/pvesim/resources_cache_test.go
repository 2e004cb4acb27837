package pvesim_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// vmRow returns one guest's /cluster/resources row.
func vmRow(t *testing.T, sim *pvesim.Server, vmid int) map[string]any {
	t.Helper()
	for _, item := range getData(t, sim, "/cluster/resources?type=vm").([]any) {
		if m := item.(map[string]any); m["vmid"] == float64(vmid) {
			return m
		}
	}
	t.Fatalf("vm %d not listed", vmid)
	return nil
}

// The listing is served from a cache; every change must still show at once where PVE
// shows it live (lock, tags, config-derived maxima) and after the lag where it lags.
func TestClusterResourcesCacheFollowsChanges(t *testing.T) {
	sim := startSim(t, pvesim.Options{ResourcesLag: 400 * time.Millisecond})
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: "pve", VMID: 700, Config: map[string]string{"name": "one", "memory": "1024"}}); err != nil {
		t.Fatal(err)
	}
	if r := vmRow(t, sim, 700); r["name"] != "one" || r["maxmem"] != float64(1024<<20) {
		t.Fatalf("fresh guest: %v", r)
	}
	res := rawCall(t, sim, http.MethodPut, "/nodes/pve/qemu/700/config", "application/x-www-form-urlencoded",
		form("memory", "2048", "tags", "x", "name", "two"), tokenHeader())
	if res.Status != http.StatusOK {
		t.Fatalf("config put: %d %s", res.Status, res.Text)
	}
	r := vmRow(t, sim, 700)
	if r["maxmem"] != float64(2048<<20) || r["tags"] != "x" || r["name"] != "one" {
		t.Fatalf("after config put: %v", r)
	}
	eventually(t, "lagged name", func() bool { return vmRow(t, sim, 700)["name"] == "two" })
	if err := sim.SetGuestStatus(700, pvesim.StatusRunning); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetGuestConfig(700, "lock", "backup"); err != nil {
		t.Fatal(err)
	}
	if r := vmRow(t, sim, 700); r["lock"] != "backup" || r["status"] != "stopped" {
		t.Fatalf("lock live, status lagging: %v", r)
	}
	eventually(t, "running", func() bool { return vmRow(t, sim, 700)["status"] == "running" })
	first := vmRow(t, sim, 700)["uptime"].(float64)
	eventually(t, "uptime ticks", func() bool { return vmRow(t, sim, 700)["uptime"].(float64) > first })
}

// A clone's disks appear in its task, whose id names the source: the target's maxdisk in
// the listing must still follow once the task is done.
func TestClusterResourcesCloneTargetMaxima(t *testing.T) {
	sim := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmclone": 300 * time.Millisecond}})
	if err := sim.AddTemplate("pve", 9000, "tmpl"); err != nil {
		t.Fatal(err)
	}
	want := vmRow(t, sim, 9000)["maxdisk"]
	res := rawCall(t, sim, http.MethodPost, "/nodes/pve/qemu/9000/clone", "application/x-www-form-urlencoded", form("newid", "901"), tokenHeader())
	if res.Status != http.StatusOK {
		t.Fatalf("clone: %d %s", res.Status, res.Text)
	}
	// Listing all along caches the placeholder's row while the clone task runs.
	eventually(t, "clone target maxdisk", func() bool {
		for _, item := range getData(t, sim, "/cluster/resources?type=vm").([]any) {
			if m := item.(map[string]any); m["vmid"] == float64(901) {
				return m["maxdisk"] == want && m["lock"] == nil
			}
		}
		return false
	})
	if want == float64(0) {
		t.Fatalf("template maxdisk is 0")
	}
}
