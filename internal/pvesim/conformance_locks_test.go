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
	sim := startSim(t, pvesim.Options{ConfigLockTimeout: lockTimeout, TaskDurations: map[string]time.Duration{"qmclone": 2 * time.Second}})
	if err := sim.AddTemplate("pve", 9000, "tmpl"); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	tmpl := vmOf(t, c, "pve", 9000)
	if _, _, err := tmpl.Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: 130}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the clone's worker to start", func() bool { g, ok := sim.Guest(130); return ok && g.Config["lock"] == "clone" })

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
	sim := startSim(t, pvesim.Options{ConfigLockTimeout: 5 * time.Second, TaskDurations: map[string]time.Duration{"qmclone": 300 * time.Millisecond}})
	if err := sim.AddTemplate("pve", 9000, "tmpl"); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	tmpl := vmOf(t, c, "pve", 9000)
	if _, _, err := tmpl.Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: 131}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the clone's worker to start", func() bool { _, ok := sim.Guest(131); return ok })
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
	sim := startSim(t, pvesim.Options{ConfigLockTimeout: lockTimeout, TaskDurations: map[string]time.Duration{"qmclone": 2 * time.Second}})
	if err := sim.AddTemplate("pve", 9000, "tmpl"); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	tmpl := vmOf(t, c, "pve", 9000)
	if _, _, err := tmpl.Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: 132}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the clone's worker to start", func() bool { _, ok := sim.Guest(132); return ok })

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
