package proxmox

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// The node listing a placement reads: each node's status and memory as
// /cluster/resources?type=node gives them (an offline node keeps maxmem,
// without mem), and 20 reconciles asking at once cost one request.
func TestSimClusterNodes(t *testing.T) {
	srv := startSim(t, pvesim.Options{Nodes: []string{"pve1", "pve2"},
		NodeMemory: map[string]pvesim.NodeMemory{"pve1": {Total: 32 << 30, Used: 2 << 30}}})
	if err := srv.SetNodeOffline("pve2", true, ""); err != nil {
		t.Fatal(err)
	}
	srv.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{PathPattern: "/cluster/resources", Latency: 100 * time.Millisecond}}})
	c, w := simClient(t, srv, useToken)
	results := make([][]NodeUsage, 20)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			rows, err := c.ClusterNodes(t.Context())
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
			}
			results[i] = rows
		})
	}
	wg.Wait()
	if got := w.count("GET /cluster/resources"); got != 1 {
		t.Errorf("20 concurrent placements made %d requests, want 1", got)
	}
	want := []NodeUsage{{Node: "pve1", Status: "online", MaxMem: 32 << 30, Mem: 2 << 30}, {Node: "pve2", Status: "offline", MaxMem: 64 << 30}}
	for i, got := range results {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("caller %d: -want, +got:\n%s", i, diff)
		}
	}
}

// The storage listing tells shared storages from local ones, per node.
func TestSimClusterStorages(t *testing.T) {
	srv := startSim(t, pvesim.Options{SharedStorage: "shared"})
	c, _ := simClient(t, srv, useToken)
	rows, err := c.ClusterStorages(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	shared := map[string]bool{}
	for _, r := range rows {
		if r.Node != "pve" {
			t.Errorf("row on node %q: %+v", r.Node, r)
		}
		shared[r.Storage] = r.Shared
	}
	if !shared["shared"] || shared["local-lvm"] {
		t.Errorf("shared flags: %v", shared)
	}
}
