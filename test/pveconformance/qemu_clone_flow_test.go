package pveconformance

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// templateVMID is the target's QEMU template, or skips without one.
func (c *tcase) templateVMID() int {
	c.t.Helper()
	id := c.Config().TemplateVMID
	if id == 0 {
		c.t.Skipf("needs a QEMU template: set %s", EnvTemplateVMID)
	}
	return id
}

// clone starts a clone of src as newid (name and pool given unless set in
// extra) and returns the answer.
func (c *tcase) clone(src, newid int, extra ...string) Response {
	c.t.Helper()
	p := Params(append([]string{"newid", itoa(newid)}, extra...)...)
	if p.Get("name") == "" {
		p.Set("name", c.GuestName("clone-"+itoa(newid)))
	}
	if p.Get("pool") == "" {
		p.Set("pool", c.Pool())
	}
	return c.raw(http.MethodPost, c.guestPath("qemu", src, "/clone"), p)
}

// While a clone runs, its VMID holds the placeholder clone_vm writes
// ("# qmclone temporary file", lock clone, read back as the description),
// and a stopped source is only share-locked, so its config has no lock
// (qemu-server src/PVE/API2/Qemu.pm clone_vm: lock_config_shared). The
// clone ends named, unlocked, its disk a linked clone of the template's
// base disk, with a MAC of its own; the task is qmclone with the source's
// VMID as its id (fork_worker('qmclone', $vmid, ...)).
func TestQemuCloneFromTemplate(t *testing.T) {
	tg := target(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmclone": 400 * time.Millisecond}})
	tg.requireSim("reads the placeholder while the clone runs: a clone slow enough for that (Options.TaskDurations)")
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/clone newid name pool")
	src, id := tg.Config().TemplateVMID, tg.vmid()
	res := tg.clone(src, id)
	if res.Status != http.StatusOK {
		t.Fatalf("clone: %s %s", res.StatusLine, res.Text)
	}
	t.Cleanup(func() { tg.destroy("qemu", id) })
	tg.eventually("the placeholder config", func() bool { return tg.guestExists("qemu", id) })
	if ph := tg.config("qemu", id, nil); ph["lock"] != "clone" || ph["description"] != " qmclone temporary file\n" || ph["name"] != nil {
		t.Errorf("placeholder: %v", ph)
	}
	srcCfg := tg.config("qemu", src, nil)
	if srcCfg["lock"] != nil {
		t.Errorf("a stopped source is only share-locked: %v", srcCfg["lock"])
	}
	if exit := tg.task(res.UPID()); exit != "OK" {
		t.Fatalf("clone task: %s", exit)
	}
	cfg := tg.config("qemu", id, nil)
	if s, _ := cfg["scsi0"].(string); cfg["name"] != tg.GuestName("clone-"+itoa(id)) || cfg["lock"] != nil || !strings.Contains(s, "base-"+itoa(src)+"-disk-0/vm-"+itoa(id)+"-disk-0") {
		t.Errorf("clone config: %v", cfg)
	}
	if cfg["net0"] == srcCfg["net0"] {
		t.Error("a clone must get its own MAC")
	}
	if parts := strings.Split(res.UPID(), ":"); len(parts) < 7 || parts[5] != "qmclone" || parts[6] != itoa(src) {
		t.Errorf("qmclone task id is the source VMID: %s", res.UPID())
	}
}

// A template is share-locked by each clone (clone_vm: lock_config_shared),
// so clones of one template run side by side and all succeed.
func TestQemuParallelClonesOfOneTemplate(t *testing.T) {
	tg := target(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmclone": 300 * time.Millisecond}})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/clone newid name pool")
	src := tg.templateVMID()
	ids := []int{tg.vmid(), tg.vmid(), tg.vmid()}
	exits := make([]string, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		t.Cleanup(func() { tg.destroy("qemu", id) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := tg.Raw(tg.ctx(), http.MethodPost, tg.guestPath("qemu", src, "/clone"), Params("newid", itoa(id), "name", tg.GuestName("parallel-"+itoa(i)), "pool", tg.Pool()))
			if err != nil || res.Status != http.StatusOK {
				exits[i] = "refused: " + res.StatusLine
				return
			}
			exits[i], err = tg.WaitTask(tg.ctx(), tg.Node(), res.UPID())
			if err != nil {
				exits[i] = err.Error()
			}
		}()
	}
	wg.Wait()
	for i, exit := range exits {
		if exit != "OK" {
			t.Errorf("clone %d: %s", ids[i], exit)
		}
	}
}

// Two clones onto one VMID: the request only checks that no config file
// exists yet, so both are accepted; the worker that comes second finds the
// file and fails "unable to create VM N: config file already exists"
// without removing the winner's config; a third request, after, is
// refused at once with the same text (qemu-server src/PVE/API2/Qemu.pm
// clone_vm, $load_and_check and the worker's check).
func TestQemuCloneThatLosesTheVMIDRaceFailsItsTask(t *testing.T) {
	tg := target(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmclone": 600 * time.Millisecond}})
	tg.requireSim("needs two clone workers overlapping: clones slow enough for that (Options.TaskDurations)")
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/clone newid name pool")
	src, id := tg.Config().TemplateVMID, tg.vmid()
	first := tg.clone(src, id, "name", tg.GuestName("winner"))
	second := tg.clone(src, id, "name", tg.GuestName("loser"))
	if first.Status != http.StatusOK || second.Status != http.StatusOK {
		t.Fatalf("both requests pass the file check: %s / %s %s", first.StatusLine, second.StatusLine, second.Text)
	}
	t.Cleanup(func() { tg.destroy("qemu", id) })
	exitFirst, exitSecond := tg.task(first.UPID()), tg.task(second.UPID())
	winner, loserExit := tg.GuestName("winner"), exitSecond
	if exitFirst != "OK" {
		winner, loserExit = tg.GuestName("loser"), exitFirst
	}
	want := "unable to create VM " + itoa(id) + ": config file already exists"
	if loserExit != want || (exitFirst != "OK" && exitSecond != "OK") {
		t.Fatalf("exactly one clone must fail its task %q: %q / %q", want, exitFirst, exitSecond)
	}
	if cfg := tg.config("qemu", id, nil); cfg["name"] != winner {
		t.Errorf("the loser must not remove the winner's config: %v", cfg)
	}
	if res := tg.clone(src, id); res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != want {
		t.Errorf("clone onto an existing VMID: %s %q", res.StatusLine, res.Message())
	}
}

// A VM that is not a template is always cloned full, named
// "Copy-of-VM-<name>" when no name is given (qemu-server
// src/PVE/API2/Qemu.pm clone_vm); a clone to another node from local
// storage is refused before forking, "can't clone VM to node '<node>' (VM
// uses local storage)"; from a shared storage it lands on the target node.
func TestQemuCloneRules(t *testing.T) {
	tg := target(t, pvesim.Options{Nodes: []string{simNode, "lowtower"}, SharedStorage: "shared"})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/clone newid pool")
	src := tg.createVM("plain")
	copyID := tg.vmid()
	res := tg.raw(http.MethodPost, tg.guestPath("qemu", src, "/clone"), Params("newid", itoa(copyID), "pool", tg.Pool()))
	if res.Status != http.StatusOK {
		t.Fatalf("clone of a VM: %s %s", res.StatusLine, res.Text)
	}
	t.Cleanup(func() {
		// Named by PVE, not by this run: renamed so the cleanup knows it.
		ctx, cancel := cleanupCtx()
		defer cancel()
		_, _ = tg.Raw(ctx, http.MethodPut, tg.guestPath("qemu", copyID, "/config"), Params("name", tg.GuestName("copy")))
		tg.destroy("qemu", copyID)
	})
	if exit := tg.task(res.UPID()); exit != "OK" {
		t.Fatalf("clone of a VM: %s", exit)
	}
	if cfg := tg.config("qemu", copyID, nil); cfg["name"] != "Copy-of-VM-"+tg.GuestName("plain") || !strings.HasPrefix(cfg["scsi0"].(string), tg.Storage()+":vm-"+itoa(copyID)+"-disk-0") {
		t.Errorf("a VM clone is full and named after its source: %v", cfg)
	}
	other := tg.Config().MigrateNode
	if other == "" {
		t.Skipf("the cross-node rules need a second node: set %s", EnvMigrateNode)
	}
	res = tg.clone(src, tg.vmid(), "target", other)
	if want := "can't clone VM to node '" + other + "' (VM uses local storage)"; res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != want {
		t.Errorf("clone to %s from local storage: %s %q", other, res.StatusLine, res.Message())
	}
	tg.requireSim("clones from a shared storage (Options.SharedStorage) to the other node")
	cross := tg.vmid()
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", tg.Config().TemplateVMID, "/clone"), Params("newid", itoa(cross), "name", tg.GuestName("cross"), "pool", tg.Pool(), "target", other, "full", "1"))
	var list []map[string]any
	tg.data("/nodes/"+other+"/qemu", nil, &list)
	found := false
	for _, g := range list {
		found = found || g["vmid"] == float64(cross)
	}
	if !found {
		t.Errorf("the cross-node clone %d is not on %s: %v", cross, other, list)
	}
}
