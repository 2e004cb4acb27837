package pveconformance

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// migrateTarget is the second node migrations go to, or skips.
func (c *tcase) migrateTarget() string {
	c.t.Helper()
	n := c.Config().MigrateNode
	if n == "" {
		c.t.Skipf("needs a second node with storage %s: set %s", c.Storage(), EnvMigrateNode)
	}
	return n
}

// A running VM is refused without online before any task: 500 "can't
// migrate running VM without --online" (qemu-server PVE/API2/Qemu.pm
// migrate_vm); with online, with-local-disks and targetstorage its local
// disk moves along and it runs on the target (PVE/QemuMigrate.pm).
func TestQemuMigrateOnlineWithLocalDisks(t *testing.T) {
	tg := target(t, pvesim.Options{Nodes: []string{"pve", "other"}})
	to := tg.migrateTarget()
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/migrate target online with-local-disks targetstorage")
	id := tg.createVM("migrate")
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/start"), nil)
	res := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/migrate"), Params("target", to))
	if res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != "can't migrate running VM without --online" {
		t.Errorf("running without online: %s %q", res.StatusLine, res.Message())
	}
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/migrate"), Params("target", to, "online", "1", "with-local-disks", "1", "targetstorage", tg.Storage()))
	if g := tg.guest(id); g.Node != to || g.Status != "running" && g.Status != "unknown" {
		t.Errorf("after migration: %+v", g)
	}
}

// A stopped container moves with its volumes (pve-container
// src/PVE/API2/LXC.pm migrate_vm, src/PVE/LXC/Migrate.pm); a running one
// needs restart (a restart migration, stopped within timeout).
func TestLXCMigrate(t *testing.T) {
	tg := target(t, pvesim.Options{Nodes: []string{"pve", "other"}})
	to := tg.migrateTarget()
	covers(tg, "POST /nodes/{node}/lxc/{vmid}/migrate target restart timeout target-storage")
	id := tg.createCT("ctmigrate")
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/status/start"), nil)
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/migrate"), Params("target", to, "restart", "1", "timeout", "30", "target-storage", tg.Storage()))
	if g := tg.guest(id); g.Node != to {
		t.Errorf("after migration: %+v", g)
	}
}

// guest is the guest's entry in /cluster/resources.
func (c *tcase) guest(vmid int) Guest {
	c.t.Helper()
	gs, err := c.GuestsInRange(c.ctx())
	if err != nil {
		c.t.Fatal(err)
	}
	for _, g := range gs {
		if g.VMID == vmid {
			return g
		}
	}
	c.t.Fatalf("guest %d not listed", vmid)
	return Guest{}
}
