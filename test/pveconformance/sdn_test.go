package pveconformance

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// GET /cluster/sdn/vnets (pve-network src/PVE/API2/Network/SDN/Vnets.pm
// index) lists every VNet of the SDN configuration, sorted by ID, each with
// vnet, type 'vnet', its zone and the configuration's digest; running=1
// lists only the applied ones (src/PVE/Network/SDN.pm running_config). The
// provider's prerequisite check reads it. On the simulator a VNet is
// staged (applied) and one pending; a real cluster's list is read as it is.
func TestSDNVNetsList(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "GET /cluster/sdn/vnets")
	want := map[string]bool{}
	if sim, ok := tg.Sim(); ok {
		for _, v := range []pvesim.VNet{{VNet: "pvecf1", Zone: "zone1", Tag: 100}, {VNet: "pvecf2", Zone: "zone1", Pending: true}} {
			if err := sim.AddVNet(v); err != nil {
				t.Fatal(err)
			}
		}
		want = map[string]bool{"pvecf1": true, "pvecf2": true}
	}
	var all, running []map[string]any
	tg.data("/cluster/sdn/vnets", nil, &all)
	tg.data("/cluster/sdn/vnets", Params("running", "1"), &running)
	prev := ""
	for _, v := range all {
		name, _ := v["vnet"].(string)
		if name == "" || v["type"] != "vnet" || v["zone"] == nil || v["digest"] == nil {
			t.Errorf("a VNet row: %v", v)
		}
		if name < prev {
			t.Errorf("not sorted by ID: %q after %q", name, prev)
		}
		prev = name
		delete(want, name)
	}
	if len(want) != 0 {
		t.Errorf("staged VNets not listed: %v (list %v)", want, all)
	}
	if len(running) > len(all) {
		t.Errorf("running=1 lists more than the configuration: %v", running)
	}
	if _, ok := tg.Sim(); ok && (len(running) != 1 || running[0]["vnet"] != "pvecf1") {
		t.Errorf("running=1 lists the applied VNet only: %v", running)
	}
	if res := tg.raw(http.MethodGet, "/cluster/sdn/vnets", Params("running", "maybe")); res.Status != http.StatusBadRequest {
		t.Errorf("running=maybe: %s, want 400 (a boolean)", res.StatusLine)
	}
}

// Staged on the simulator, the whole answer (pve-network
// src/PVE/API2/Network/SDN/Vnets.pm index): every VNet sorted by ID
// (sdn_vnets_ids), its section's keys plus vnet, type 'vnet' and digest
// ($api_sdn_vnets_config: the digest of the file read; the running
// configuration has none, so running=1 and pending=1 carry null). A VNet not
// applied yet is a plain row of the configuration, absent from running=1,
// and under pending=1 has only vnet and type at the top, its keys under
// "pending" and state "new" (src/PVE/Network/SDN.pm pending_config). The
// node network listing adds the applied ones as type 'vnet' rows for
// any_bridge, include_sdn and vnet (pve-manager PVE/API2/Network.pm index;
// pve-network src/PVE/Network/SDN.pm get_local_vnets reads the running
// configuration), not for bridge.
func TestSDNVNetsStaged(t *testing.T) {
	tg := target(t, pvesim.Options{})
	sim := tg.requireSim("the suite does not change a real cluster's SDN configuration")
	covers(tg, "GET /cluster/sdn/vnets", "GET /nodes/{node}/network type")
	var empty []map[string]any
	tg.data("/cluster/sdn/vnets", nil, &empty)
	if len(empty) != 0 {
		t.Fatalf("a cluster without VNets lists %v", empty)
	}
	for _, v := range []pvesim.VNet{{VNet: "vnet2", Zone: "zone1", Tag: 200, VlanAware: true}, {VNet: "vnet1", Zone: "zone1", Tag: 100, Alias: "lab"}, {VNet: "vnet3", Zone: "zone2", Pending: true}} {
		if err := sim.AddVNet(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := sim.AddVNet(pvesim.VNet{VNet: "1bad", Zone: "zone1"}); err == nil {
		t.Error("AddVNet took an ID pve-sdn-vnet-id refuses (a digit first)")
	}
	rows := func(params url.Values) []map[string]any {
		var out []map[string]any
		tg.data("/cluster/sdn/vnets", params, &out)
		return out
	}
	config := rows(nil)
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
		"":        {vnet1(digest), vnet2(digest), {"vnet": "vnet3", "type": "vnet", "zone": "zone2", "digest": digest}},
		"running": {vnet1(nil), vnet2(nil)},
		"pending": {vnet1(nil), vnet2(nil), {"vnet": "vnet3", "type": "vnet", "state": "new", "pending": map[string]any{"zone": "zone2"}, "digest": nil}},
	} {
		params := url.Values{}
		if q != "" {
			params = Params(q, "1")
		}
		if diff := cmp.Diff(want, rows(params)); diff != "" {
			t.Errorf("GET /cluster/sdn/vnets %s=1: -want +got:\n%s", q, diff)
		}
	}
	withVNets := map[string]any{"vmbr0": "bridge", "vnet1": "vnet", "vnet2": "vnet"}
	for typ, want := range map[string]map[string]any{
		"any_bridge": withVNets,
		"bridge":     {"vmbr0": "bridge"},
		"vnet":       {"vnet1": "vnet", "vnet2": "vnet"},
	} {
		var list []map[string]any
		tg.data("/nodes/"+url.PathEscape(tg.Node())+"/network", Params("type", typ), &list)
		got := map[string]any{}
		for _, r := range list {
			got[r["iface"].(string)] = r["type"]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET /nodes/%s/network?type=%s: -want +got:\n%s", tg.Node(), typ, diff)
		}
	}
}
