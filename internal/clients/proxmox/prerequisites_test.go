package proxmox

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// A refused prerequisite names what is missing and what there is, so the
// user can correct the spec from the condition alone: the message is the
// behaviour under test, compared whole.
func TestCheckPrerequisitesNamesWhatIsMissing(t *testing.T) {
	const suffix = ": cannot create in Proxmox VE"
	cases := map[string]struct {
		reason string
		p      Prerequisites
		want   string
	}{
		"NodeMissing": {
			reason: "A node not in the cluster is named with the cluster's nodes.",
			p:      Prerequisites{Node: "pve-nope"},
			want:   `node "pve-nope" is not in the Proxmox VE cluster (nodes: pve)` + suffix,
		},
		"StorageMissing": {
			reason: "A disk storage the node does not have is named with the node's storages.",
			p:      Prerequisites{Node: "pve", DiskStorages: []string{"ceph-pool"}},
			want:   `storage "ceph-pool" does not exist on node "pve" (storages: local, local-lvm)` + suffix,
		},
		"StorageWithoutImages": {
			reason: "A disk storage that holds no VM disks is named with its content.",
			p:      Prerequisites{Node: "pve", DiskStorages: []string{"local"}},
			want:   `storage "local" on node "pve" does not hold VM disks (its content: iso,vztmpl,snippets,import,backup)` + suffix,
		},
		"VolumeMissing": {
			reason: "A volume that does not exist is named with its node.",
			p:      Prerequisites{Node: "pve", Volumes: []string{"local:iso/missing.iso"}},
			want:   `volume "local:iso/missing.iso" does not exist on node "pve"` + suffix,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, _ := simClient(t, startSim(t, pvesim.Options{}), useToken)
			err := c.CheckPrerequisites(context.Background(), tc.p)
			if !errors.Is(err, ErrMissingPrerequisite) {
				t.Fatalf("%s\nCheckPrerequisites: %v, want ErrMissingPrerequisite", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("%s\nmessage: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
