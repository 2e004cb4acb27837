package pveconformance

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Config file locks. A lock_config that finds the file lock held waits for
// it and fails with pve-common src/PVE/Tools.pm lock_file_full's "can't lock
// file '$filename' - got timeout" when it does not come free in time. These
// cases need a short lock timeout and tasks of a fixed length, which only the
// simulator sets.
const lockTimeout = 300 * time.Millisecond

const lockWhy = "needs a short config-lock timeout and a task of fixed length"

// cloningTemplate starts a simulator whose config file locks time out after
// lockTimeout and a clone of the seeded template to a new VMID running for
// cloneTime; it returns once the clone's worker holds the locks, with the
// template's and the clone's VMIDs. qemu-server src/PVE/API2/Qemu.pm
// clone_vm: the qmclone worker runs inside lock_config_shared (a template) of
// the source and lock_config_full of the target.
func cloningTemplate(t *testing.T, lockTimeout, cloneTime time.Duration) (*tcase, *pvesim.Server, int, int) {
	t.Helper()
	tg := target(t, pvesim.Options{ConfigLockTimeout: lockTimeout, TaskDurations: map[string]time.Duration{"qmclone": cloneTime}})
	sim := tg.requireSim(lockWhy)
	tmpl, newID := tg.Config().TemplateVMID, tg.vmid()
	if r := tg.raw(http.MethodPost, tg.guestPath("qemu", tmpl, "/clone"), Params("newid", strconv.Itoa(newID))); r.Status != http.StatusOK {
		t.Fatalf("clone: %s %s", r.StatusLine, r.Text)
	}
	tg.eventually("the clone's worker to start", func() bool { g, ok := sim.Guest(newID); return ok && g.Config["lock"] == "clone" })
	return tg, sim, tmpl, newID
}

// A clone holds its source's config file lock for the whole task: a synchronous config
// write to the template (update_vm's lock_config) waits for it and fails with the timeout, a 500.
func TestPutConfigWaitsForTheFileLockThenTimesOut(t *testing.T) {
	tg, _, tmpl, _ := cloningTemplate(t, lockTimeout, 2*time.Second)
	covers(tg, "PUT /nodes/{node}/qemu/{vmid}/config description")
	start := time.Now()
	res := tg.raw(http.MethodPut, tg.guestPath("qemu", tmpl, "/config"), Params("description", "x"))
	want := "500 can't lock file '/var/lock/qemu-server/lock-" + strconv.Itoa(tmpl) + ".conf' - got timeout"
	if res.StatusLine != want {
		t.Fatalf("PUT config during the clone: %s, want %q", res.StatusLine, want)
	}
	if waited := time.Since(start); waited < lockTimeout {
		t.Errorf("answered after %s, before lock_config's timeout %s", waited, lockTimeout)
	}
}

// A writer that finds the lock held waits for it: when the holder ends within the
// timeout, the write goes through.
func TestPutConfigProceedsOnceTheFileLockIsFree(t *testing.T) {
	tg, sim, tmpl, newID := cloningTemplate(t, 5*time.Second, 300*time.Millisecond)
	if res := tg.raw(http.MethodPut, tg.guestPath("qemu", tmpl, "/config"), Params("description", "after the clone")); res.Status != http.StatusOK {
		t.Fatalf("PUT config once the clone ended: %s", res.StatusLine)
	}
	if g, _ := sim.Guest(newID); g.Config["lock"] != "" {
		t.Errorf("the write went through before the clone ended: lock %q", g.Config["lock"])
	}
}

// The asynchronous update takes the file lock in its worker (update_vm via
// fork_worker, qemu-server src/PVE/API2/Qemu.pm): a held one fails the task,
// not the request. Its early checks see the lock property first
// (check_lock): on the clone's target that is a 500 at once.
func TestPostConfigFileLockFailsTheTask(t *testing.T) {
	tg, _, tmpl, newID := cloningTemplate(t, lockTimeout, 2*time.Second)
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/config description cores")
	res := tg.raw(http.MethodPost, tg.guestPath("qemu", tmpl, "/config"), Params("description", "x"))
	if res.Status != http.StatusOK {
		t.Fatalf("POST config on the clone's source: %s, want a task", res.StatusLine)
	}
	if exit, want := tg.task(res.UPID()), "can't lock file '/var/lock/qemu-server/lock-"+strconv.Itoa(tmpl)+".conf' - got timeout"; exit != want {
		t.Errorf("task ended %q, want %q", exit, want)
	}
	res = tg.raw(http.MethodPost, tg.guestPath("qemu", newID, "/config"), Params("cores", "2"))
	if res.StatusLine != "500 VM is locked (clone)" {
		t.Fatalf("POST config on the clone's target: %s, want 500 VM is locked (clone)", res.StatusLine)
	}
}

// creatingContainer starts a simulator whose config file locks time out
// after lockTimeout and a vzcreate of a new CT running for createTime; it
// returns at once, the create's worker holding the new CT's config file lock
// (pve-container src/PVE/API2/LXC.pm create_vm: create_and_lock_config, the
// worker inside lock_config).
func creatingContainer(t *testing.T, lockTimeout, createTime time.Duration) (*tcase, *pvesim.Server, int) {
	t.Helper()
	tg := target(t, pvesim.Options{ConfigLockTimeout: lockTimeout, TaskDurations: map[string]time.Duration{"vzcreate": createTime}})
	sim := tg.requireSim(lockWhy)
	id := tg.vmid()
	res := tg.raw(http.MethodPost, "/nodes/"+url.PathEscape(tg.Node())+"/lxc", Params("vmid", strconv.Itoa(id),
		"ostemplate", tg.Config().CTTemplate, "rootfs", tg.Storage()+":4"))
	if res.Status != http.StatusOK {
		t.Fatalf("create: %s %s", res.StatusLine, res.Text)
	}
	return tg, sim, id
}

// update_vm (pve-container src/PVE/API2/LXC/Config.pm) takes
// /run/lock/lxc/pve-config-<vmid>.lock before any check, so during the
// create it waits for it and fails with the timeout, a 500.
func TestLXCPutConfigWaitsForTheCreateFileLockThenTimesOut(t *testing.T) {
	tg, sim, id := creatingContainer(t, lockTimeout, 2*time.Second)
	covers(tg, "PUT /nodes/{node}/lxc/{vmid}/config memory")
	start := time.Now()
	res := tg.raw(http.MethodPut, tg.guestPath("lxc", id, "/config"), Params("memory", "256"))
	want := "can't lock file '/run/lock/lxc/pve-config-" + strconv.Itoa(id) + ".lock' - got timeout"
	if res.Status != http.StatusInternalServerError || res.Message() != want+"\n" {
		t.Fatalf("PUT config during the create: %s %q, want 500 %q", res.StatusLine, res.Message(), want)
	}
	if waited := time.Since(start); waited < lockTimeout {
		t.Errorf("answered after %s, before lock_config's timeout %s", waited, lockTimeout)
	}
	if g, _ := sim.Guest(id); g.Config["memory"] == "256" {
		t.Error("a write that timed out changed the config")
	}
}

// When the create ends within the timeout, the waiting write goes through.
func TestLXCPutConfigProceedsOnceTheCreateEnds(t *testing.T) {
	tg, sim, id := creatingContainer(t, 5*time.Second, 300*time.Millisecond)
	if res := tg.raw(http.MethodPut, tg.guestPath("lxc", id, "/config"), Params("memory", "256")); res.Status != http.StatusOK {
		t.Fatalf("PUT config once the create ended: %s %q", res.StatusLine, res.Message())
	}
	if g, _ := sim.Guest(id); g.Lock != "" || g.Config["memory"] != "256" {
		t.Errorf("after the write: lock %q, memory %q", g.Lock, g.Config["memory"])
	}
}

// resize_vm (pve-container src/PVE/API2/LXC.pm) runs load_and_check
// (check_lock) before forking: on a CT being created that is the lock
// property's 500 at once, not a wait for the file lock.
func TestLXCResizeDuringCreateFailsOnTheLockProperty(t *testing.T) {
	tg, _, id := creatingContainer(t, 5*time.Second, 2*time.Second)
	covers(tg, "PUT /nodes/{node}/lxc/{vmid}/resize disk size")
	start := time.Now()
	res := tg.raw(http.MethodPut, tg.guestPath("lxc", id, "/resize"), Params("disk", "rootfs", "size", "+1G"))
	if res.Status != http.StatusInternalServerError || res.Message() != "CT is locked (create)\n" {
		t.Fatalf("resize during the create: %s %q", res.StatusLine, res.Message())
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("resize waited %s for the file lock; its early check fails at once", waited)
	}
}

// A container clone marks its source with the lock property "disk" and
// holds no file lock on it (pve-container src/PVE/API2/LXC.pm clone_vm:
// set_lock($vmid, 'disk'), then create_and_lock_config of the new CT): a
// config write to the source fails at once, unlike a QEMU clone's source.
func TestLXCCloneSourceIsLockedByPropertyNotFileLock(t *testing.T) {
	tg := target(t, pvesim.Options{ConfigLockTimeout: 5 * time.Second, TaskDurations: map[string]time.Duration{"vzclone": 2 * time.Second}})
	sim := tg.requireSim(lockWhy)
	covers(tg, "POST /nodes/{node}/lxc/{vmid}/clone newid", "PUT /nodes/{node}/lxc/{vmid}/config description")
	tmpl := tg.seedGuest(sim, pvesim.GuestSeed{Kind: "lxc", Template: true, Config: map[string]string{"hostname": "tmpl", "rootfs": tg.Storage() + ":2"}})
	if res := tg.raw(http.MethodPost, tg.guestPath("lxc", tmpl, "/clone"), Params("newid", strconv.Itoa(tg.vmid()))); res.Status != http.StatusOK {
		t.Fatalf("clone: %s %q", res.StatusLine, res.Message())
	}
	start := time.Now()
	res := tg.raw(http.MethodPut, tg.guestPath("lxc", tmpl, "/config"), Params("description", "x"))
	if res.Status != http.StatusInternalServerError || res.Message() != "CT is locked (disk)\n" {
		t.Fatalf("PUT config on the clone's source: %s %q", res.StatusLine, res.Message())
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("the write waited %s: the source's file lock is not held by a container clone", waited)
	}
}
