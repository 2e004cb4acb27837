package pvesim_test

import (
	"net/http"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// GET /cloudinit types config values by the schema (ciupgrade is a 0/1 number) while
// values the drive was generated from are strings, as qemu-server sends them.
func TestCloudinitPendingTypes(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: "pve", VMID: 321, Config: map[string]string{
		"ciuser": "alice", "ciupgrade": "1", "cipassword": "secret", "ipconfig0": "ip=dhcp", "ide2": "local-lvm:cloudinit",
	}}); err != nil {
		t.Fatal(err)
	}
	put := func(path, body string) {
		t.Helper()
		res := rawCall(t, sim, http.MethodPut, path, "application/x-www-form-urlencoded", body, tokenHeader())
		if res.Status != http.StatusOK {
			t.Fatalf("PUT %s: %d %s", path, res.Status, res.Text)
		}
	}
	put("/nodes/pve/qemu/321/cloudinit", "")
	put("/nodes/pve/qemu/321/config", form("ciuser", "bob", "ciupgrade", "0", "nameserver", "1.1.1.1"))
	items := map[string]map[string]any{}
	for _, it := range getData(t, sim, "/nodes/pve/qemu/321/cloudinit").([]any) {
		m := it.(map[string]any)
		items[m["key"].(string)] = m
	}
	want := map[string]map[string]any{
		"ciuser":     {"key": "ciuser", "value": "alice", "pending": "bob"},
		"ciupgrade":  {"key": "ciupgrade", "value": "1", "pending": float64(0)},
		"cipassword": {"key": "cipassword", "value": "**********"},
		"ipconfig0":  {"key": "ipconfig0", "value": "ip=dhcp"},
		"nameserver": {"key": "nameserver", "pending": "1.1.1.1"},
	}
	for k, w := range want {
		got := items[k]
		if len(got) != len(w) {
			t.Fatalf("%s: got %v, want %v", k, got, w)
		}
		for f, v := range w {
			if got[f] != v {
				t.Fatalf("%s.%s: got %#v, want %#v (item %v)", k, f, got[f], v, got)
			}
		}
	}
}
