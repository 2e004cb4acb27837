package pvesim_test

import (
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
