package proxmox

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A running guest migrates live (a VM online with its local disks, a
// container with a restart migration, which is all PVE offers for LXC); a
// stopped one offline; each kind names its target storage its own way.
func TestMigrationParams(t *testing.T) {
	cases := map[string]struct {
		reason string
		typ    GuestType
		m      Migration
		want   map[string]string
	}{
		"VMOnline": {reason: "A live VM migration lets local disks move along.",
			typ: QEMU, m: Migration{Target: "b", Online: true, TargetStorage: "local-lvm"},
			want: map[string]string{"target": "b", "online": "1", "with-local-disks": "1", "targetstorage": "local-lvm"}},
		"VMOffline": {reason: "A stopped VM moves offline.",
			typ: QEMU, m: Migration{Target: "b"}, want: map[string]string{"target": "b"}},
		"ContainerRunning": {reason: "A running container moves with restart=1 and the shutdown timeout, never online=1.",
			typ: LXC, m: Migration{Target: "b", Online: true, TargetStorage: "local-lvm", ShutdownTimeoutSeconds: 45},
			want: map[string]string{"target": "b", "restart": "1", "timeout": "45", "target-storage": "local-lvm"}},
		"ContainerStopped": {reason: "A stopped container moves offline.",
			typ: LXC, m: Migration{Target: "b", ShutdownTimeoutSeconds: 45}, want: map[string]string{"target": "b"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.m.params(tc.typ)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nparams: -want, +got:\n%s", tc.reason, diff)
			}
			// qemu-server src/PVE/API2/Qemu.pm, migrate_vm: these answer 400 "Only root may
			// use this option." for anyone but root@pam, so the provider never sends them.
			for _, rootOnly := range []string{"force", "migration_type", "migration_network"} {
				if _, ok := got[rootOnly]; ok {
					t.Errorf("%s\nsends the root@pam-only parameter %s", tc.reason, rootOnly)
				}
			}
		})
	}
}

// The simulator accepts what the client sends for a running container and
// moves it, running, to the target.
func TestContainerMigrationAgainstSimulator(t *testing.T) {
	srv := startSim(t, pvesim.Options{Nodes: []string{"pve", "other"}})
	if err := srv.AddGuest(pvesim.GuestSeed{Kind: pvesim.KindLXC, Node: "pve", VMID: 170, Running: true,
		Config: map[string]string{"hostname": "ct", "rootfs": "local-lvm:2"}}); err != nil {
		t.Fatal(err)
	}
	c, _ := simClient(t, srv, useToken)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	upid, err := c.MigrateGuest(ctx, GuestRef{Type: LXC, Node: "pve", VMID: 170},
		Migration{Target: "other", Online: true, TargetStorage: "local-lvm", ShutdownTimeoutSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	waitSimTask(ctx, t, c, upid)
	if g, _ := srv.Guest(170); g.Node != "other" || g.Status != "running" {
		t.Errorf("container on %s, %s; want running on other", g.Node, g.Status)
	}
}
