package pvesim_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const lockTimeout = 300 * time.Millisecond

// A clone holds its source's config file lock for the whole task: a synchronous config
// write to the template waits for it and fails with lock_config's timeout, a 500.
func TestPutConfigWaitsForTheFileLockThenTimesOut(t *testing.T) {
	_, _, tmpl := cloningTemplate(t, lockTimeout, 2*time.Second, 130)
	ctx := testCtx(t)

	start := time.Now()
	err := tmpl.ConfigSync(ctx, proxmox.VirtualMachineOption{Name: "description", Value: "x"})
	want := "can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout"
	if ae := apiErr(t, err); ae.Status != "500 "+want {
		t.Fatalf("PUT config during the clone: %v, want 500 %q", err, want)
	}
	if waited := time.Since(start); waited < lockTimeout {
		t.Errorf("answered after %s, before lock_config's timeout %s", waited, lockTimeout)
	}
}

// A writer that finds the lock held waits for it: when the holder ends within the
// timeout, the write goes through.
func TestPutConfigProceedsOnceTheFileLockIsFree(t *testing.T) {
	sim, _, tmpl := cloningTemplate(t, 5*time.Second, 300*time.Millisecond, 131)
	ctx := testCtx(t)
	if err := tmpl.ConfigSync(ctx, proxmox.VirtualMachineOption{Name: "description", Value: "after the clone"}); err != nil {
		t.Fatalf("PUT config once the clone ended: %v", err)
	}
	if g, _ := sim.Guest(131); g.Config["lock"] != "" {
		t.Errorf("the write went through before the clone ended: lock %q", g.Config["lock"])
	}
}

// The asynchronous update takes the file lock in its worker: a held one fails the task,
// not the request. Its early checks see the lock property first: on the clone's target
// that is a 500 at once.
func TestPostConfigFileLockFailsTheTask(t *testing.T) {
	_, c, tmpl := cloningTemplate(t, lockTimeout, 2*time.Second, 132)
	ctx := testCtx(t)

	task, err := tmpl.Config(ctx, proxmox.VirtualMachineOption{Name: "description", Value: "x"})
	if err != nil {
		t.Fatalf("POST config on the clone's source: %v, want a task", err)
	}
	wantTaskFailure(t, c, task, "can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout")

	_, err = vmOf(t, c, "pve", 132).Config(ctx, proxmox.VirtualMachineOption{Name: "cores", Value: 2})
	if ae := apiErr(t, err); ae.Status != "500 VM is locked (clone)" {
		t.Fatalf("POST config on the clone's target: %v, want 500 VM is locked (clone)", err)
	}
}

// cloningTemplate starts a simulator whose config file locks time out after lockTimeout,
// and a clone of template 9000 to newID running for cloneTime; it returns once the clone's
// worker holds the locks.
func cloningTemplate(t *testing.T, lockTimeout, cloneTime time.Duration, newID int) (*pvesim.Server, *proxmox.Client, *proxmox.VirtualMachine) {
	t.Helper()
	sim := startSim(t, pvesim.Options{ConfigLockTimeout: lockTimeout, TaskDurations: map[string]time.Duration{"qmclone": cloneTime}})
	if err := sim.AddTemplate("pve", 9000, "tmpl"); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	tmpl := vmOf(t, c, "pve", 9000)
	if _, _, err := tmpl.Clone(testCtx(t), &proxmox.VirtualMachineCloneOptions{NewID: newID}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the clone's worker to start", func() bool { g, ok := sim.Guest(newID); return ok && g.Config["lock"] == "clone" })
	return sim, c, tmpl
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pve-container's create runs its worker inside lock_config on the new CT: update_vm,
// which takes /run/lock/lxc/pve-config-<vmid>.lock before any check, waits for it and
// fails with lock_config's timeout, a 500.
func TestLXCPutConfigWaitsForTheCreateFileLockThenTimesOut(t *testing.T) {
	sim := creatingContainer(t, lockTimeout, 2*time.Second, 140)

	start := time.Now()
	res := rawCall(t, sim, http.MethodPut, "/nodes/pve/lxc/140/config", formType, form("memory", "256"), tokenHeader())
	want := "can't lock file '/run/lock/lxc/pve-config-140.lock' - got timeout"
	if res.Status != http.StatusInternalServerError || res.message() != want+"\n" {
		t.Fatalf("PUT config during the create: %d %q, want 500 %q", res.Status, res.message(), want)
	}
	if waited := time.Since(start); waited < lockTimeout {
		t.Errorf("answered after %s, before lock_config's timeout %s", waited, lockTimeout)
	}
	if g, _ := sim.Guest(140); g.Config["memory"] == "256" {
		t.Error("a write that timed out changed the config")
	}
}

// When the create ends within the timeout, the waiting write goes through.
func TestLXCPutConfigProceedsOnceTheCreateEnds(t *testing.T) {
	sim := creatingContainer(t, 5*time.Second, 300*time.Millisecond, 141)
	res := rawCall(t, sim, http.MethodPut, "/nodes/pve/lxc/141/config", formType, form("memory", "256"), tokenHeader())
	if res.Status != http.StatusOK {
		t.Fatalf("PUT config once the create ended: %d %q", res.Status, res.message())
	}
	if g, _ := sim.Guest(141); g.Lock != "" || g.Config["memory"] != "256" {
		t.Errorf("after the write: lock %q, memory %q", g.Lock, g.Config["memory"])
	}
}

// resize_vm runs load_and_check (check_lock) before forking: on a CT being created that is
// the lock property's 500 at once, not a wait for the file lock.
func TestLXCResizeDuringCreateFailsOnTheLockProperty(t *testing.T) {
	sim := creatingContainer(t, 5*time.Second, 2*time.Second, 142)
	start := time.Now()
	res := rawCall(t, sim, http.MethodPut, "/nodes/pve/lxc/142/resize", formType, form("disk", "rootfs", "size", "+1G"), tokenHeader())
	if res.Status != http.StatusInternalServerError || res.message() != "CT is locked (create)\n" {
		t.Fatalf("resize during the create: %d %q", res.Status, res.message())
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("resize waited %s for the file lock; its early check fails at once", waited)
	}
}

// A container clone marks its source with the lock property "disk" and holds no file lock
// on it: a config write to the source fails at once, unlike a QEMU clone's source.
func TestLXCCloneSourceIsLockedByPropertyNotFileLock(t *testing.T) {
	sim := startSim(t, pvesim.Options{ConfigLockTimeout: 5 * time.Second, TaskDurations: map[string]time.Duration{"vzclone": 2 * time.Second}})
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: 9100, Template: true,
		Config: map[string]string{"hostname": "tmpl", "rootfs": "local-lvm:2"}}); err != nil {
		t.Fatal(err)
	}
	h := tokenHeader()
	if res := rawCall(t, sim, http.MethodPost, "/nodes/pve/lxc/9100/clone", formType, form("newid", "143"), h); res.Status != http.StatusOK {
		t.Fatalf("clone: %d %q", res.Status, res.message())
	}
	start := time.Now()
	res := rawCall(t, sim, http.MethodPut, "/nodes/pve/lxc/9100/config", formType, form("description", "x"), h)
	if res.Status != http.StatusInternalServerError || res.message() != "CT is locked (disk)\n" {
		t.Fatalf("PUT config on the clone's source: %d %q", res.Status, res.message())
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("the write waited %s: the source's file lock is not held by a container clone", waited)
	}
}

const formType = "application/x-www-form-urlencoded"

// creatingContainer starts a simulator whose config file locks time out after lockTimeout
// and a vzcreate of CT vmid running for createTime; it returns at once, the create's
// worker holding the new CT's config file lock.
func creatingContainer(t *testing.T, lockTimeout, createTime time.Duration, vmid int) *pvesim.Server {
	t.Helper()
	sim := startSim(t, pvesim.Options{ConfigLockTimeout: lockTimeout, TaskDurations: map[string]time.Duration{"vzcreate": createTime}})
	if err := sim.AddVolume("pve", debianTemplate); err != nil {
		t.Fatal(err)
	}
	res := rawCall(t, sim, http.MethodPost, "/nodes/pve/lxc", formType,
		form("vmid", strconv.Itoa(vmid), "ostemplate", debianTemplate, "rootfs", "local-lvm:4"), tokenHeader())
	if res.Status != http.StatusOK {
		t.Fatalf("create: %d %s", res.Status, res.Text)
	}
	return sim
}
