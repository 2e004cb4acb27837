package proxmox

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A burst of creates reads the listings once; something made in Proxmox
// after a listing was kept is still found, because a refusal re-reads.
func TestCheckPrerequisitesKeepsListingsButNeverRefusesOnThem(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	c, w := simClient(t, srv, useToken)
	ctx := context.Background()
	p := Prerequisites{Node: "pve", DiskStorages: []string{"local-lvm"}, Bridges: []string{"vmbr0"}}
	for range 3 {
		if err := c.CheckPrerequisites(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.count("GET /nodes/pve/network"); got != 1 {
		t.Errorf("3 checks read the node's bridges %d times, want once", got)
	}
	if got := w.count("GET /nodes"); got != 1 {
		t.Errorf("3 checks read the node list %d times, want once", got)
	}

	if err := srv.AddBridge("pve", "vmbr7"); err != nil {
		t.Fatal(err)
	}
	p.Bridges = []string{"vmbr7"}
	if err := c.CheckPrerequisites(ctx, p); err != nil {
		t.Fatalf("a bridge made after the listing was kept: %v", err)
	}

	p.Bridges = []string{"vmbr9"}
	err := c.CheckPrerequisites(ctx, p)
	if !errors.Is(err, ErrMissingPrerequisite) || !strings.Contains(err.Error(), `bridge "vmbr9" does not exist on node "pve" (bridges: vmbr0, vmbr7)`) {
		t.Fatalf("missing bridge: %v", err)
	}
}
