package pveconformance

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// resourceRows lists /cluster/resources of one type, keyed by id.
func (c *tcase) resourceRows(typ string) map[string]map[string]any {
	c.t.Helper()
	var rs []map[string]any
	c.data("/cluster/resources", Params("type", typ), &rs)
	out := make(map[string]map[string]any, len(rs))
	for _, r := range rs {
		id, _ := r["id"].(string)
		out[id] = r
	}
	return out
}

// /cluster/resources?type=node lists every node (pve-manager
// PVE/API2/Cluster.pm resources, PVE/API2Tools.pm extract_node_stats):
// "online" with maxmem and mem (the host's RAM and what it uses, from
// pvestatd's rrd entry) for a member that is online; "offline" for one
// that is not, keeping maxmem from its last entry but with no mem. The
// provider's placement ranks nodes by maxmem - mem and skips those not
// online.
func TestClusterResourcesNodes(t *testing.T) {
	tg := target(t, pvesim.Options{Nodes: []string{simNode, "pve2", "pve3"},
		NodeMemory: map[string]pvesim.NodeMemory{"pve2": {Total: 32 << 30, Used: 4 << 30}}})
	covers(tg, "GET /cluster/resources type")
	for id, r := range tg.resourceRows("node") {
		maxmem, _ := r["maxmem"].(float64)
		mem, _ := r["mem"].(float64)
		if r["type"] != "node" || id != "node/"+r["node"].(string) {
			t.Errorf("node row %s: %v", id, r)
		}
		if r["status"] == "online" && (maxmem <= 0 || mem > maxmem) {
			t.Errorf("online node %s: maxmem %v mem %v", id, r["maxmem"], r["mem"])
		}
	}
	sim := tg.requireSim("node memory figures and an offline node are staged")
	if r := tg.resourceRows("node")["node/pve2"]; r["maxmem"] != float64(32<<30) || r["mem"] != float64(4<<30) || r["status"] != "online" {
		t.Errorf("pve2 with 32 GiB, 4 GiB used: %v", r)
	}
	if err := sim.SetNodeOffline("pve3", true, ""); err != nil {
		t.Fatal(err)
	}
	r := tg.resourceRows("node")["node/pve3"]
	if mem, _ := r["mem"].(float64); r["status"] != "offline" || mem != 0 || r["maxmem"] != float64(64<<30) {
		t.Errorf("offline pve3: status offline, maxmem kept, no mem: %v", r)
	}
}

// /cluster/resources?type=storage has one row per storage and node it is
// enabled on, with shared 0 or 1 from the storage's configuration
// (PVE/API2Tools.pm extract_storage_stats: shared => $scfg->{shared} || 0):
// the flag the provider's placement reads to tell whether a template can
// be cloned to another node.
func TestClusterResourcesStorageShared(t *testing.T) {
	tg := target(t, pvesim.Options{Nodes: []string{simNode, "pve2"}, SharedStorage: "shared"})
	covers(tg, "GET /cluster/resources type")
	rows := tg.resourceRows("storage")
	for id, r := range rows {
		if r["shared"] != float64(0) && r["shared"] != float64(1) {
			t.Errorf("storage row %s: shared %v, want 0 or 1", id, r["shared"])
		}
	}
	tg.requireSim("a shared storage on every node (Options.SharedStorage)")
	for _, node := range []string{simNode, "pve2"} {
		if r := rows["storage/"+node+"/shared"]; r["shared"] != float64(1) || r["storage"] != "shared" || r["node"] != node {
			t.Errorf("shared storage on %s: %v", node, r)
		}
		if r := rows["storage/"+node+"/"+tg.Storage()]; r["shared"] != float64(0) {
			t.Errorf("%s on %s: %v", tg.Storage(), node, r)
		}
	}
}

// A clone to another node with a target storage (qemu-server
// src/PVE/API2/Qemu.pm clone_vm, load_and_check): the storage must be
// shared ("can't clone to non-shared storage '<storage>'"), and even then a
// VM whose volumes are on local storage is refused ("can't clone VM to node
// '<node>' (VM uses local storage)": $check_storage_access_clone judges
// the source's volumes whatever the target storage; pve-container judges
// them by the target storage instead). A template on shared storage clones
// there.
func TestQemuCloneToNodeWithTargetStorage(t *testing.T) {
	tg := target(t, pvesim.Options{Nodes: []string{simNode, "lowtower"}, SharedStorage: "shared"})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/clone newid name pool target full storage")
	other := tg.Config().MigrateNode
	if other == "" {
		t.Skipf("the cross-node rules need a second node: set %s", EnvMigrateNode)
	}
	sim := tg.requireSim("a template on local storage next to a shared storage (Options.SharedStorage)")
	local := tg.vmid()
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: pvesim.KindQemu, Node: tg.Node(), VMID: local, Template: true,
		Config: map[string]string{"name": tg.GuestName("local-tpl"), "scsi0": tg.Storage() + ":8", "ide2": "none,media=cdrom"}}); err != nil {
		t.Fatal(err)
	}
	res := tg.clone(local, tg.vmid(), "target", other, "full", "1", "storage", tg.Storage())
	if want := "can't clone to non-shared storage '" + tg.Storage() + "'"; res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != want {
		t.Errorf("target storage not shared: %s %q, want %q", res.StatusLine, res.Message(), want)
	}
	res = tg.clone(local, tg.vmid(), "target", other, "full", "1", "storage", "shared")
	if want := "can't clone VM to node '" + other + "' (VM uses local storage)"; res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != want {
		t.Errorf("local source, shared target storage: %s %q, want %q", res.StatusLine, res.Message(), want)
	}
	cross := tg.vmid()
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", tg.Config().TemplateVMID, "/clone"),
		Params("newid", itoa(cross), "name", tg.GuestName("cross"), "pool", tg.Pool(), "target", other, "full", "1", "storage", "shared"))
	t.Cleanup(func() { tg.destroy("qemu", cross) })
	var list []map[string]any
	tg.data("/nodes/"+other+"/qemu", nil, &list)
	if !slices.ContainsFunc(list, func(g map[string]any) bool { return g["vmid"] == float64(cross) }) {
		t.Errorf("the clone %d to a shared target storage is not on %s: %v", cross, other, list)
	}
}
