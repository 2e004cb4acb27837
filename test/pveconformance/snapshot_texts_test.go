package pveconformance

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// logHas reports whether a task log has a line containing text.
func logHas(lines []string, text string) bool {
	for _, l := range lines {
		if strings.Contains(l, text) {
			return true
		}
	}
	return false
}

// pve-container's own texts and task outcomes for clone, snapshot and destroy.
func TestLXCCloneSnapshotDestroyTexts(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/lxc/{vmid}/clone newid full", "POST /nodes/{node}/lxc/{vmid}/snapshot snapname",
		"DELETE /nodes/{node}/lxc/{vmid}/snapshot/{snapname}", "POST /nodes/{node}/lxc/{vmid}/snapshot/{snapname}/rollback",
		"DELETE /nodes/{node}/lxc/{vmid} force")
	id := tg.createCT("texts")
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/status/start"), nil)

	// pve-container src/PVE/API2/LXC.pm, clone_vm: die "Full clone of a running container is
	// only possible from a snapshot\n" (before the worker).
	res := tg.raw(http.MethodPost, tg.guestPath("lxc", id, "/clone"), Params("newid", strconv.Itoa(tg.vmid()), "full", "1"))
	if want := "Full clone of a running container is only possible from a snapshot\n"; res.Status != http.StatusInternalServerError || res.Message() != want {
		t.Errorf("full clone of a running CT: %s %q, want 500 %q", res.StatusLine, res.Message(), want)
	}

	// pve-container src/PVE/API2/LXC/Snapshot.pm, snapshot: only 'current' and 'vzdump' are
	// reserved (pve-guest-common src/PVE/AbstractConfig.pm, __snapshot_prepare reserves
	// none); unlike qemu-server, 'pending' is a container snapshot name like any other.
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/snapshot"), Params("snapname", "pending"))
	res = tg.raw(http.MethodPost, tg.guestPath("lxc", id, "/snapshot"), Params("snapname", "vzdump"))
	if want := "unable to use snapshot name 'vzdump' (reserved name)\n"; res.Status != http.StatusInternalServerError || res.Message() != want {
		t.Errorf("snapshot vzdump: %s %q, want 500 %q", res.StatusLine, res.Message(), want)
	}
	tg.mustTask(http.MethodDelete, tg.guestPath("lxc", id, "/snapshot/pending"), nil)

	// pve-container src/PVE/API2/LXC/Snapshot.pm, snapshot, delsnapshot and rollback fork
	// without loading the config: for a CT that is not there the worker fails in load_config
	// (pve-guest-common src/PVE/AbstractConfig.pm, load_config).
	missing := tg.vmid()
	wantErr := "Configuration file 'nodes/" + tg.Node() + "/lxc/" + strconv.Itoa(missing) + ".conf' does not exist"
	for what, req := range map[string][2]string{
		"snapshot": {http.MethodPost, "/snapshot"},
		"delete":   {http.MethodDelete, "/snapshot/s1"},
		"rollback": {http.MethodPost, "/snapshot/s1/rollback"},
	} {
		var params map[string][]string
		if what == "snapshot" {
			params = Params("snapname", "s1")
		}
		res := tg.raw(req[0], tg.guestPath("lxc", missing, req[1]), params)
		if res.Status != http.StatusOK {
			t.Errorf("%s of a missing CT is no request error: %s %s", what, res.StatusLine, res.Text)
			continue
		}
		if exit := tg.task(res.UPID()); !strings.Contains(exit, wantErr) {
			t.Errorf("%s of a missing CT ended %q, want %q", what, exit, wantErr)
		}
	}

	// pve-container src/PVE/API2/LXC.pm, destroy_vm: with force a running CT is stopped with
	// a plain warn ("forced to stop CT $vmid before destroying!\n"), which only the log
	// shows: the task still ends OK (pve-common src/PVE/RESTEnvironment.pm counts only
	// log_warn towards WARNINGS).
	upid := tg.mustTask(http.MethodDelete, tg.guestPath("lxc", id, ""), Params("force", "1"))
	if lines := tg.taskLog(upid); !logHas(lines, "forced to stop CT "+strconv.Itoa(id)+" before destroying!") {
		t.Errorf("task log %q: want the forced stop", lines)
	}
}

// Reserved snapshot names are refused before any task, with PVE's literal text:
//   - qemu-server src/PVE/API2/Qemu.pm, snapshot: `die "unable to use snapshot name 'current'
//     (reserved name)\n" if $snapname eq 'current'` and `die "unable to use snapshot name
//     'pending' (reserved name)\n" if lc($snapname) eq 'pending'`: 'pending' in any case, and
//     the message names 'pending' whatever case was sent;
//   - pve-container src/PVE/API2/LXC/Snapshot.pm, snapshot: 'current' and 'vzdump' exactly;
//     'pending' is no reserved name for a container.
func TestSnapshotReservedNamesAreReportedLiterally(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/snapshot snapname", "POST /nodes/{node}/lxc/{vmid}/snapshot snapname")
	vm := tg.guestPath("qemu", tg.createVM("reserved"), "/snapshot")
	ct := tg.guestPath("lxc", tg.createCT("reserved"), "/snapshot")
	cases := []struct {
		name, reason, path, snap string
		status                   int
		message                  string
	}{
		{"QemuPendingUpper", "lc($snapname) eq 'pending', message literal", vm, "PENDING", http.StatusInternalServerError, "unable to use snapshot name 'pending' (reserved name)\n"},
		{"QemuPendingMixed", "lc($snapname) eq 'pending', message literal", vm, "Pending", http.StatusInternalServerError, "unable to use snapshot name 'pending' (reserved name)\n"},
		{"QemuCurrent", "$snapname eq 'current'", vm, "current", http.StatusInternalServerError, "unable to use snapshot name 'current' (reserved name)\n"},
		{"QemuCurrentUpper", "'current' is compared as sent", vm, "CURRENT", http.StatusOK, ""},
		{"LxcVzdump", "$snapname eq 'vzdump'", ct, "vzdump", http.StatusInternalServerError, "unable to use snapshot name 'vzdump' (reserved name)\n"},
		{"LxcPending", "pve-container reserves no 'pending'", ct, "pending", http.StatusOK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := tg.in(t)
			res := tg.raw(http.MethodPost, tc.path, Params("snapname", tc.snap))
			if res.Status != tc.status {
				t.Fatalf("%s: POST %s snapname=%s = %s %s, want %d", tc.reason, tc.path, tc.snap, res.StatusLine, res.Text, tc.status)
			}
			if tc.message != "" && res.Message() != tc.message {
				t.Errorf("%s: message %q, want %q", tc.reason, res.Message(), tc.message)
			}
			if res.Status == http.StatusOK {
				if exit := tg.task(res.UPID()); exit != "OK" {
					t.Errorf("%s: snapshot task ended %q", tc.reason, exit)
				}
			}
		})
	}
}

// Every entry of a VM's snapshot list carries vmstate, 0 or 1, and the "current" entry none
// (qemu-server src/PVE/API2/Qemu.pm, snapshot_list: `vmstate => $d->{vmstate} ? 1 : 0`;
// the current item is built without it). A container's entries carry no vmstate
// (pve-container src/PVE/API2/LXC/Snapshot.pm, list).
func TestSnapshotListCarriesVMState(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/snapshot snapname vmstate", "GET /nodes/{node}/qemu/{vmid}/snapshot",
		"GET /nodes/{node}/lxc/{vmid}/snapshot")
	vm, ct := tg.createVM("vmstate"), tg.createCT("vmstate")
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", vm, "/status/start"), nil)
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", vm, "/snapshot"), Params("snapname", "disks"))
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", vm, "/snapshot"), Params("snapname", "withram", "vmstate", "1"))
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", ct, "/snapshot"), Params("snapname", "ct"))
	vmstates := func(path string) map[string]any {
		var list []map[string]any
		tg.data(path, nil, &list)
		out := map[string]any{}
		for _, m := range list {
			v, ok := m["vmstate"]
			if !ok {
				v = "absent"
			}
			out[m["name"].(string)] = v
		}
		return out
	}
	want := map[string]any{"disks": float64(0), "withram": float64(1), "current": "absent"}
	if diff := cmp.Diff(want, vmstates(tg.guestPath("qemu", vm, "/snapshot"))); diff != "" {
		t.Errorf("VM snapshot list vmstate: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"ct": "absent", "current": "absent"}, vmstates(tg.guestPath("lxc", ct, "/snapshot"))); diff != "" {
		t.Errorf("container snapshot list vmstate: -want +got:\n%s", diff)
	}
}
