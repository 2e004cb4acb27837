package pveconformance

import (
	"net/http"
	"slices"
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

// The precondition a migration dialog reads: a stopped VM with a local disk
// lists that disk in local_disks with its drive, and the other node among
// allowed_nodes (qemu-server src/PVE/API2/Qemu.pm migrate_vm_precondition);
// a container's answer names running and the allowed nodes (pve-container
// src/PVE/API2/LXC.pm migrate_vm_precondition, PVE 9).
func TestMigratePrecondition(t *testing.T) {
	tg := target(t, pvesim.Options{Nodes: []string{"pve", "other"}})
	to := tg.migrateTarget()
	covers(tg, "GET /nodes/{node}/qemu/{vmid}/migrate target", "GET /nodes/{node}/lxc/{vmid}/migrate target")
	vm := tg.createVM("precondition")
	var q struct {
		Running      int      `json:"running"`
		AllowedNodes []string `json:"allowed_nodes"`
		LocalDisks   []struct {
			Drivename string `json:"drivename"`
		} `json:"local_disks"`
	}
	tg.data(tg.guestPath("qemu", vm, "/migrate"), Params("target", to), &q)
	if q.Running != 0 || !slices.Contains(q.AllowedNodes, to) {
		t.Errorf("qemu precondition: running %d, allowed %v; want 0 and %s allowed", q.Running, q.AllowedNodes, to)
	}
	// Whether the disk is local depends on the storage: check it where the
	// target says the storage is node-local (the simulator's local-lvm).
	if tg.Config().Endpoint == "" && (len(q.LocalDisks) != 1 || q.LocalDisks[0].Drivename != "scsi0") {
		t.Errorf("qemu precondition local_disks %+v, want scsi0 on %s", q.LocalDisks, tg.Storage())
	}
	ct := tg.createCT("ctprecondition")
	var l struct {
		Running      int      `json:"running"`
		AllowedNodes []string `json:"allowed-nodes"`
	}
	tg.data(tg.guestPath("lxc", ct, "/migrate"), Params("target", to), &l)
	if l.Running != 0 || !slices.Contains(l.AllowedNodes, to) {
		t.Errorf("lxc precondition: running %d, allowed %v; want 0 and %s allowed", l.Running, l.AllowedNodes, to)
	}
}
