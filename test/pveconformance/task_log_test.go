package pveconformance

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// logLine is one entry of a task log answer.
type logLine struct {
	N int    `json:"n"`
	T string `json:"t"`
}

// readTaskLog reads the task's log with params and returns the lines and
// the total beside them.
func (c *tcase) readTaskLog(upid string, params url.Values) ([]logLine, int) {
	c.t.Helper()
	path := "/nodes/" + url.PathEscape(c.Node()) + "/tasks/" + url.PathEscape(upid) + "/log"
	res := c.raw(http.MethodGet, path, params)
	if res.Status != http.StatusOK {
		c.t.Fatalf("GET %s: %s %s", path, res.StatusLine, res.Text)
	}
	var lines []logLine
	if err := res.Data(&lines); err != nil {
		c.t.Fatal(err)
	}
	raw, ok := res.Body["total"]
	if !ok {
		c.t.Fatalf("GET %s carries no total beside data: %s", path, res.Text)
	}
	var total int
	if err := json.Unmarshal(raw, &total); err != nil {
		c.t.Fatalf("total of %s: %v", path, err)
	}
	return lines, total
}

// startVM creates a QEMU guest of this run with extra parameters and starts it.
func (c *tcase) startVM(purpose string, extra ...string) int {
	c.t.Helper()
	id := c.createVM(purpose, extra...)
	c.mustTask(http.MethodPost, c.guestPath("qemu", id, "/status/start"), nil)
	return id
}

// The task log answer follows pve-manager PVE/API2/Tasks.pm, read_task_log, over pve-common
// src/PVE/Tools.pm, dump_logfile / dump_logfile_by_filehandle: lines from start (default 0),
// at most limit (default 50; `read_until_end => $limit == 0`, so limit=0 reads to the end),
// numbered n from 1; total ($rpcenv->set_result_attrib('total', $count)) counts every line of
// the file, also those past limit; an empty log reads as the one line "no content", total 1.
func TestTaskLogReadsLikeDumpLogfile(t *testing.T) {
	tg := target(t, pvesim.Options{AgentStartDelay: time.Hour})
	covers(tg, "GET /nodes/{node}/tasks/{upid}/log start limit")
	// A forced shutdown of a guest ignoring the power button: a finished
	// task with a short log (qemu-server src/PVE/QemuServer.pm _do_vm_stop).
	id := tg.startVM("tasklog", "acpi", "0")
	done := tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/shutdown"), Params("timeout", "1", "forceStop", "1"))
	full, total := tg.readTaskLog(done, Params("limit", "0"))
	if total != len(full) || total < 2 {
		t.Fatalf("limit=0 read %d lines of total %d: %v", len(full), total, full)
	}
	cases := map[string]struct {
		reason    string
		params    url.Values
		wantLines []logLine
	}{
		"Default":         {"start 0, limit 50: the whole of a short log", nil, full},
		"LimitZero":       {"read_until_end when limit is 0", Params("limit", "0"), full},
		"LimitOne":        {"one line; total still counts them all", Params("limit", "1"), full[:1]},
		"FromSecond":      {"n keeps the file's numbering", Params("start", "1", "limit", "0"), full[1:]},
		"PastTheEnd":      {"nothing to read, but the file has lines: no 'no content'", Params("start", "100"), []logLine{}},
		"StartAndLimitOK": {"start and limit together", Params("start", "1", "limit", "1"), full[1:2]},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := tg.in(t)
			lines, gotTotal := tg.readTaskLog(done, tc.params)
			if diff := cmp.Diff(tc.wantLines, lines); diff != "" {
				t.Errorf("%s: lines -want +got:\n%s", tc.reason, diff)
			}
			if gotTotal != total {
				t.Errorf("%s: total %d, want %d (every line of the log)", tc.reason, gotTotal, total)
			}
		})
	}
	t.Run("EmptyLogOfARunningTask", func(t *testing.T) {
		tg := tg.in(t)
		tg.requireSim("a real task may write its first line before the log is read")
		// A shutdown waiting out its timeout has written nothing yet.
		res := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/status/start"), nil)
		tg.task(res.UPID())
		res = tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/status/shutdown"), Params("timeout", "30"))
		lines, rtotal := tg.readTaskLog(res.UPID(), nil)
		if diff := cmp.Diff([]logLine{{N: 1, T: "no content"}}, lines); diff != "" || rtotal != 1 {
			t.Errorf("empty log of a running task: total %d, lines -want +got:\n%s", rtotal, diff)
		}
	})
}

// Freeing a protected volume fails the imgdel task with pve-storage's text (src/PVE/Storage/
// Plugin.pm, free_image: `die "cannot remove protected volume '$volname' on '$storeid'\n"`).
func TestFreeProtectedVolumeFailsTheTask(t *testing.T) {
	tg := target(t, pvesim.Options{})
	sim := tg.requireSim("PVE protects backup volumes only; the suite writes no backups on a real cluster")
	covers(tg, "DELETE /nodes/{node}/storage/{storage}/content/{volume}")
	volid := tg.ContentStorage() + ":iso/" + Prefix + "keep.iso"
	if err := sim.AddVolume(tg.Node(), volid); err != nil {
		t.Fatal(err)
	}
	if err := sim.ProtectVolume(tg.Node(), volid, true); err != nil {
		t.Fatal(err)
	}
	res := tg.raw(http.MethodDelete, tg.storagePath(tg.ContentStorage(), "/content/"+url.PathEscape(volid)), nil)
	if want := "cannot remove protected volume 'iso/" + Prefix + "keep.iso' on '" + tg.ContentStorage() + "'"; tg.task(res.UPID()) != want {
		t.Errorf("exit status, want %q; log %q", want, tg.taskLog(res.UPID()))
	}
}

// Only $rpcenv->warn (log_warn) counts towards a worker's "TASK WARNINGS: n" (pve-common
// src/PVE/RESTEnvironment.pm, sub warn increments warning_count; fork_worker ends the log with
// TASK WARNINGS only when it is non-zero). A plain Perl warn in a worker goes to the task log
// alone and the task ends OK. Every place the simulator warned is one of those:
//   - qemu-server src/PVE/QemuServer.pm, sub _do_vm_stop: `warn "VM still running - terminating
//     now with SIGTERM\n"` after the shutdown timeout with forceStop, and `warn "VM quit/powerdown
//     failed - terminating now with SIGTERM\n"` when the powerdown command failed;
//   - pve-storage src/PVE/Storage/Plugin.pm, sub free_image: `warn "disk image '$path' does not
//     exist\n"` and return, after which the imgdel worker (src/PVE/API2/Storage/Content.pm,
//     delete) prints "Removed volume '$volid'".
func TestPlainWarnEndsTaskOK(t *testing.T) {
	tg := target(t, pvesim.Options{AgentStartDelay: time.Hour})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/status/shutdown timeout forceStop", "DELETE /nodes/{node}/storage/{storage}/content/{volume}")
	gone := tg.ContentStorage() + ":iso/" + Prefix + tg.RunID() + "-gone.iso"
	cases := map[string]struct {
		reason      string
		method      string
		path        func() string
		params      url.Values
		wantLogTail []string
	}{
		"ForcedStopAfterTimeout": {
			reason: "_do_vm_stop: a guest ignoring the power button is terminated after the timeout",
			method: http.MethodPost, path: func() string { return tg.guestPath("qemu", tg.startVM("ignoresacpi", "acpi", "0"), "/status/shutdown") },
			params:      Params("timeout", "1", "forceStop", "1"),
			wantLogTail: []string{"VM still running - terminating now with SIGTERM", "TASK OK"},
		},
		"ForcedStopAfterFailedPowerdown": {
			reason: "_do_vm_stop: the agent's guest-shutdown failed (no agent answers), so the guest is terminated at once",
			method: http.MethodPost, path: func() string { return tg.guestPath("qemu", tg.startVM("noagent", "agent", "1"), "/status/shutdown") },
			params:      Params("timeout", "30", "forceStop", "1"),
			wantLogTail: []string{"VM quit/powerdown failed - terminating now with SIGTERM", "TASK OK"},
		},
		"FreeMissingVolume": {
			reason: "free_image warns about a file already gone; the worker still reports the volume removed",
			method: http.MethodDelete, path: func() string { return tg.storagePath(tg.ContentStorage(), "/content/"+url.PathEscape(gone)) },
			wantLogTail: []string{"Removed volume '" + gone + "'", "TASK OK"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := tg.in(t)
			res := tg.raw(tc.method, tc.path(), tc.params)
			if res.Status != http.StatusOK {
				t.Fatalf("%s: %s %s", tc.reason, res.StatusLine, res.Text)
			}
			if exit := tg.task(res.UPID()); exit != "OK" {
				t.Errorf("%s: exit status %q, want OK (a plain warn is no TASK WARNINGS)", tc.reason, exit)
			}
			lines := tg.taskLog(res.UPID())
			got := lines[max(0, len(lines)-len(tc.wantLogTail)):]
			if diff := cmp.Diff(tc.wantLogTail, got); diff != "" {
				t.Errorf("%s: log tail -want +got:\n%s", tc.reason, diff)
			}
			if name == "FreeMissingVolume" && !logHas(lines, "/"+Prefix+tg.RunID()+"-gone.iso' does not exist") {
				t.Errorf("%s: log %q, want free_image's warning", tc.reason, lines)
			}
		})
	}
}
