package pveconformance

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// GET /version answers release, version and repoid (pve-manager
// PVE/API2.pm version); the provider checks the major version is 9.
func TestVersion(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "GET /version")
	var v map[string]any
	tg.data("/version", nil, &v)
	if s, _ := v["version"].(string); !strings.HasPrefix(s, "9.") || v["release"] == nil || v["repoid"] == nil {
		t.Fatalf("version: %v", v)
	}
}

// A password login answers a ticket and a CSRF token (pve-access-control
// PVE/API2/AccessControl.pm create_ticket); a wrong password is 401
// "authentication failure" (PVE::APIServer::AnyEvent auth_handler: the
// reason phrase), which the provider classifies as AuthenticationFailed.
func TestTicketLoginAndAuthFailures(t *testing.T) {
	tg := target(t, pvesim.Options{})
	cfg := tg.Config()
	if cfg.Username == "" {
		t.Skip("needs a password user (PVE_USERNAME, PVE_PASSWORD)")
	}
	covers(tg, "POST /access/ticket username password")
	res, err := tg.RawAs(tg.ctx(), http.MethodPost, "/access/ticket", Params("username", cfg.Username, "password", cfg.Password), nil)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := res.Data(&d); err != nil || d["ticket"] == nil || d["CSRFPreventionToken"] == nil || d["username"] != cfg.Username {
		t.Fatalf("login: %s", res.Text)
	}
	bad, err := tg.RawAs(tg.ctx(), http.MethodPost, "/access/ticket", Params("username", cfg.Username, "password", cfg.Password+"-wrong"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if bad.Status != http.StatusUnauthorized || bad.StatusLine != "401 authentication failure" {
		t.Errorf("wrong password: %s", bad.StatusLine)
	}
	anon, err := tg.RawAs(tg.ctx(), http.MethodGet, "/version", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if anon.Status != http.StatusUnauthorized || anon.StatusLine != "401 No ticket" {
		t.Errorf("no credential: %s", anon.StatusLine)
	}
	badToken, err := tg.RawAs(tg.ctx(), http.MethodGet, "/version", nil, map[string]string{"Authorization": "PVEAPIToken=" + cfg.Username + "!nosuchtoken=00000000-0000-0000-0000-000000000000"})
	if err != nil {
		t.Fatal(err)
	}
	if badToken.Status != http.StatusUnauthorized {
		t.Errorf("unknown token: %s", badToken.StatusLine)
	}
}

// /cluster/nextid without vmid answers the lowest free id as a string;
// with a taken vmid it is 400 "VM N already exists" (pve-manager
// PVE/API2/Cluster.pm nextid).
func TestNextID(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "GET /cluster/nextid vmid")
	var free string
	tg.data("/cluster/nextid", nil, &free)
	if _, err := strconv.Atoi(free); err != nil {
		t.Fatalf("nextid is a decimal string, got %q", free)
	}
	id := tg.createVM("nextid")
	res := tg.raw(http.MethodGet, "/cluster/nextid", Params("vmid", strconv.Itoa(id)))
	if res.Status != http.StatusBadRequest || !strings.Contains(res.Text, "VM "+strconv.Itoa(id)+" already exists") {
		t.Fatalf("taken vmid: %s %s", res.StatusLine, res.Text)
	}
}

// /cluster/resources?type=vm lists each guest with its node, pool and tags
// at once; its status, name and template come from pvestatd's broadcast,
// some seconds behind (pve-manager PVE/API2/Cluster.pm resources reads
// PVE::Cluster::rrd_dump): a fresh guest is listed with status "unknown".
func TestClusterResourcesListsGuestsInThePool(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "GET /cluster/resources type")
	id := tg.createVM("resources", "tags", "a;b")
	var rs []map[string]any
	tg.data("/cluster/resources", Params("type", "vm"), &rs)
	for _, r := range rs {
		if r["vmid"] == float64(id) {
			if r["node"] != tg.Node() || r["pool"] != tg.Pool() || r["type"] != "qemu" || r["tags"] != "a;b" {
				t.Fatalf("guest %d: %v", id, r)
			}
			return
		}
	}
	t.Fatalf("guest %d not listed", id)
}

// The lag of /cluster/resources: only the simulator can hold pvestatd's
// broadcast back for a set time.
func TestClusterResourcesLag(t *testing.T) {
	tg := target(t, pvesim.Options{ResourcesLag: 500 * time.Millisecond})
	tg.requireSim("the lag of pvestatd's broadcast cannot be set on a real cluster")
	covers(tg, "GET /cluster/resources type")
	id := tg.createVM("lagging")
	status := func() any {
		var rs []map[string]any
		tg.data("/cluster/resources", Params("type", "vm"), &rs)
		for _, r := range rs {
			if r["vmid"] == float64(id) {
				return r["status"]
			}
		}
		return nil
	}
	if s := status(); s != "unknown" {
		t.Fatalf("fresh guest status %v, want unknown", s)
	}
	deadline := time.Now().Add(10 * time.Second)
	for status() != "stopped" {
		if time.Now().After(deadline) {
			t.Fatal("status never caught up")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// GET /nodes lists node names and status (pve-manager PVE/API2/Nodes.pm
// index); GET /nodes/{node}/storage lists the storages with their content
// types, and status their use (pve-storage PVE/API2/Storage/Status.pm
// index, read_status).
func TestNodesAndStorages(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "GET /nodes", "GET /nodes/{node}/storage", "GET /nodes/{node}/storage/{storage}/status")
	var nodes []map[string]any
	tg.data("/nodes", nil, &nodes)
	found := false
	for _, n := range nodes {
		found = found || (n["node"] == tg.Node() && n["status"] == "online")
	}
	if !found {
		t.Fatalf("node %s not listed online: %v", tg.Node(), nodes)
	}
	var sts []map[string]any
	tg.data("/nodes/"+url.PathEscape(tg.Node())+"/storage", nil, &sts)
	contents := map[string]string{}
	for _, s := range sts {
		contents[s["storage"].(string)], _ = s["content"].(string)
	}
	if !strings.Contains(contents[tg.Storage()], "images") || !strings.Contains(contents[tg.ContentStorage()], "vztmpl") {
		t.Fatalf("storages %s (images) and %s (vztmpl): %v", tg.Storage(), tg.ContentStorage(), contents)
	}
	var st map[string]any
	tg.data("/nodes/"+url.PathEscape(tg.Node())+"/storage/"+url.PathEscape(tg.Storage())+"/status", nil, &st)
	if st["total"] == nil || st["avail"] == nil || st["active"] != float64(1) {
		t.Fatalf("storage status: %v", st)
	}
}

// GET /nodes/{node}/network?type=any_bridge lists only bridges
// (pve-manager PVE/API2/Network.pm index, its type filter); the provider's
// prerequisite check looks for a NIC's bridge there.
func TestNodeNetworkBridges(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "GET /nodes/{node}/network type")
	var ifs []map[string]any
	tg.data("/nodes/"+url.PathEscape(tg.Node())+"/network", Params("type", "any_bridge"), &ifs)
	if len(ifs) == 0 {
		t.Fatal("no bridge listed")
	}
	for _, i := range ifs {
		if i["type"] != "bridge" && i["type"] != "OVSBridge" {
			t.Errorf("type=any_bridge listed %v", i)
		}
	}
}
