package pvesim_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// GET /cluster/sdn/vnets follows pve-network src/PVE/API2/Network/SDN/Vnets.pm, index: every
// VNet sorted by ID (sdn_vnets_ids), its section's keys plus vnet, type 'vnet' and digest
// ($api_sdn_vnets_config: the digest of the file read; the running configuration has none,
// so running=1 and pending=1 carry null); no VNets is an empty list. A VNet not applied yet is
// a plain row of the configuration, absent from running=1, and under pending=1 has only vnet
// and type at the top, its keys under "pending" and state "new" (src/PVE/Network/SDN.pm,
// pending_config). The node network listing adds the applied ones as type 'vnet' rows for
// any_bridge, include_sdn and vnet (pve-manager PVE/API2/Network.pm, index; pve-network
// src/PVE/Network/SDN.pm, get_local_vnets reads the running configuration), not for bridge.
func TestSDNVNets(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if got := getData(t, sim, "/cluster/sdn/vnets").([]any); len(got) != 0 {
		t.Fatalf("a cluster without VNets lists %v", got)
	}
	for _, v := range []pvesim.VNet{{VNet: "vnet2", Zone: "zone1", Tag: 200, VlanAware: true}, {VNet: "vnet1", Zone: "zone1", Tag: 100, Alias: "lab"}, {VNet: "vnet3", Zone: "zone2", Pending: true}} {
		if err := sim.AddVNet(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := sim.AddVNet(pvesim.VNet{VNet: "1bad", Zone: "zone1"}); err == nil {
		t.Error("AddVNet took an ID pve-sdn-vnet-id refuses (a digit first)")
	}
	rows := func(path string) []map[string]any {
		data := getData(t, sim, path).([]any)
		out := make([]map[string]any, 0, len(data))
		for _, r := range data {
			out = append(out, r.(map[string]any))
		}
		return out
	}
	config := rows("/cluster/sdn/vnets")
	digest, ok := config[0]["digest"].(string)
	if !ok || digest == "" {
		t.Fatalf("the configuration's rows carry its digest: %v", config)
	}
	vnet1 := func(d any) map[string]any {
		return map[string]any{"vnet": "vnet1", "type": "vnet", "zone": "zone1", "tag": float64(100), "alias": "lab", "digest": d}
	}
	vnet2 := func(d any) map[string]any {
		return map[string]any{"vnet": "vnet2", "type": "vnet", "zone": "zone1", "tag": float64(200), "vlanaware": float64(1), "digest": d}
	}
	for q, want := range map[string][]map[string]any{
		"":          {vnet1(digest), vnet2(digest), {"vnet": "vnet3", "type": "vnet", "zone": "zone2", "digest": digest}},
		"running=1": {vnet1(nil), vnet2(nil)},
		"pending=1": {vnet1(nil), vnet2(nil), {"vnet": "vnet3", "type": "vnet", "state": "new", "pending": map[string]any{"zone": "zone2"}, "digest": nil}},
	} {
		if diff := cmp.Diff(want, rows("/cluster/sdn/vnets?"+q)); diff != "" {
			t.Errorf("GET /cluster/sdn/vnets?%s: -want +got:\n%s", q, diff)
		}
	}

	ifaces := func(typ string) map[string]any {
		out := map[string]any{}
		for _, r := range rows("/nodes/pve/network?type=" + typ) {
			out[r["iface"].(string)] = r["type"]
		}
		return out
	}
	withVNets := map[string]any{"vmbr0": "bridge", "vnet1": "vnet", "vnet2": "vnet"}
	for typ, want := range map[string]map[string]any{
		"any_bridge": withVNets,
		"bridge":     {"vmbr0": "bridge"},
		"vnet":       {"vnet1": "vnet", "vnet2": "vnet"},
	} {
		if diff := cmp.Diff(want, ifaces(typ)); diff != "" {
			t.Errorf("GET /nodes/pve/network?type=%s: -want +got:\n%s", typ, diff)
		}
	}

	res := rawCall(t, sim, http.MethodGet, "/cluster/sdn/vnets?running=maybe", "", "", tokenHeader())
	if res.Status != http.StatusBadRequest {
		t.Errorf("running=maybe: %d, want 400 (a boolean)", res.Status)
	}
}
