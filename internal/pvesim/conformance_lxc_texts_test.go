package pvesim_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// pve-container's own texts and task outcomes for clone, snapshot and destroy.
func TestLXCCloneSnapshotDestroyTexts(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: 340, Running: true,
		Config: map[string]string{"hostname": "x", "rootfs": "local-lvm:2"}}); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	ct := c.NodeRef("pve").ContainerRef(340)

	// pve-container src/PVE/API2/LXC.pm, clone_vm: die "Full clone of a running container is
	// only possible from a snapshot\n" (before the worker).
	res := rawCall(t, sim, http.MethodPost, "/nodes/pve/lxc/340/clone", "application/x-www-form-urlencoded", form("newid", "341", "full", "1"), tokenHeader())
	if want := "Full clone of a running container is only possible from a snapshot\n"; res.Status != http.StatusInternalServerError || res.message() != want {
		t.Errorf("full clone of a running CT: %d %q, want 500 %q", res.Status, res.message(), want)
	}

	// pve-container src/PVE/API2/LXC/Snapshot.pm, snapshot: only 'current' and 'vzdump' are
	// reserved (pve-guest-common src/PVE/AbstractConfig.pm, __snapshot_prepare reserves
	// none); unlike qemu-server, 'pending' is a container snapshot name like any other.
	task, err := ct.NewSnapshot(ctx, "pending")
	mustWait(t, c, "snapshot named pending", task, err)
	res = rawCall(t, sim, http.MethodPost, "/nodes/pve/lxc/340/snapshot", "application/x-www-form-urlencoded", form("snapname", "vzdump"), tokenHeader())
	if want := "unable to use snapshot name 'vzdump' (reserved name)\n"; res.Status != http.StatusInternalServerError || res.message() != want {
		t.Errorf("snapshot vzdump: %d %q, want 500 %q", res.Status, res.message(), want)
	}
	task, err = ct.Snapshot("pending").Delete(ctx)
	mustWait(t, c, "delete snapshot", task, err)

	// pve-container src/PVE/API2/LXC/Snapshot.pm, snapshot, delsnapshot and rollback fork
	// without loading the config: for a CT that is not there the worker fails in load_config
	// (pve-guest-common src/PVE/AbstractConfig.pm, load_config).
	missing := c.NodeRef("pve").ContainerRef(349)
	for what, call := range map[string]func() (*proxmox.Task, error){
		"snapshot": func() (*proxmox.Task, error) { return missing.NewSnapshot(ctx, "s1") },
		"delete":   func() (*proxmox.Task, error) { return missing.Snapshot("s1").Delete(ctx) },
		"rollback": func() (*proxmox.Task, error) { return missing.Snapshot("s1").Rollback(ctx, false) },
	} {
		task, err := call()
		if err != nil {
			t.Errorf("%s of a missing CT is no request error: %v", what, err)
			continue
		}
		if err := waitTask(t, c, task); !proxmox.IsTaskFailed(err) || !strings.Contains(err.Error(), "Configuration file 'nodes/pve/lxc/349.conf' does not exist") {
			t.Errorf("%s of a missing CT: %v", what, err)
		}
	}

	// pve-container src/PVE/API2/LXC.pm, destroy_vm: with force a running CT is stopped with
	// a plain warn ("forced to stop CT $vmid before destroying!\n"), which only the log
	// shows: the task still ends OK (pve-common src/PVE/RESTEnvironment.pm counts only
	// log_warn towards WARNINGS).
	task, err = ct.Delete(ctx, &proxmox.ContainerDeleteOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := waitTask(t, c, task); err != nil || task.ExitStatus != "OK" {
		t.Fatalf("forced destroy: %v, exit %q", err, task.ExitStatus)
	}
	lines := getData(t, sim, "/nodes/pve/tasks/"+url.PathEscape(string(task.UPID))+"/log").([]any)
	if !logHas(lines, "forced to stop CT 340 before destroying!") {
		t.Errorf("task log %v: want the forced stop", lines)
	}
}

// logHas reports whether a task log (as /tasks/{upid}/log answers it) has a line containing text.
func logHas(lines []any, text string) bool {
	for _, l := range lines {
		if m, ok := l.(map[string]any); ok && strings.Contains(fmt.Sprint(m["t"]), text) {
			return true
		}
	}
	return false
}
