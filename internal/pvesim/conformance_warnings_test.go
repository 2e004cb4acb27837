package pvesim_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Freeing a protected volume fails the imgdel task with pve-storage's text (src/PVE/Storage/
// Plugin.pm, free_image: `die "cannot remove protected volume '$volname' on '$storeid'\n"`).
func TestFreeProtectedVolumeFailsTheTask(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddVolume("pve", "local:iso/keep.iso"); err != nil {
		t.Fatal(err)
	}
	if err := sim.ProtectVolume("pve", "local:iso/keep.iso", true); err != nil {
		t.Fatal(err)
	}
	upid := startTask(t, sim, http.MethodDelete, "/nodes/pve/storage/local/content/local:iso/keep.iso", "")
	var status map[string]any
	eventually(t, "the task ends", func() bool {
		status = getMap(t, sim, "/nodes/pve/tasks/"+url.PathEscape(upid)+"/status")
		return status["status"] == "stopped"
	})
	if want := "cannot remove protected volume 'iso/keep.iso' on 'local'"; status["exitstatus"] != want {
		t.Errorf("exit status %q, want %q", status["exitstatus"], want)
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
	sim := startSim(t, pvesim.Options{AgentStartDelay: time.Hour})
	for vmid, cfg := range map[int]map[string]string{601: {"acpi": "0"}, 602: {"agent": "1"}} {
		cfg["name"] = "g"
		if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: vmid, Running: true, Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]struct {
		reason      string
		method      string
		path        string
		body        string
		wantLogTail []string
	}{
		"ForcedStopAfterTimeout": {
			reason: "_do_vm_stop: a guest ignoring the power button is terminated after the timeout",
			method: http.MethodPost, path: "/nodes/pve/qemu/601/status/shutdown", body: "timeout=1&forceStop=1",
			wantLogTail: []string{"VM still running - terminating now with SIGTERM", "TASK OK"},
		},
		"ForcedStopAfterFailedPowerdown": {
			reason: "_do_vm_stop: the agent's guest-shutdown failed, so the guest is terminated at once",
			method: http.MethodPost, path: "/nodes/pve/qemu/602/status/shutdown", body: "timeout=30&forceStop=1",
			wantLogTail: []string{"VM quit/powerdown failed - terminating now with SIGTERM", "TASK OK"},
		},
		"FreeMissingVolume": {
			reason: "free_image warns about a file already gone; the worker still reports the volume removed",
			method: http.MethodDelete, path: "/nodes/pve/storage/local/content/local:iso/gone.iso",
			wantLogTail: []string{"disk image '/var/lib/vz/template/iso/gone.iso' does not exist", "Removed volume 'local:iso/gone.iso'", "TASK OK"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			upid := startTask(t, sim, tc.method, tc.path, tc.body)
			var status map[string]any
			eventually(t, "the task ends", func() bool {
				status = getMap(t, sim, "/nodes/pve/tasks/"+url.PathEscape(upid)+"/status")
				return status["status"] == "stopped"
			})
			if status["exitstatus"] != "OK" {
				t.Errorf("%s: exit status %q, want OK (a plain warn is no TASK WARNINGS)", tc.reason, status["exitstatus"])
			}
			lines := strings.Split(taskLogText(t, sim, upid), "\n")
			got := lines[max(0, len(lines)-len(tc.wantLogTail)):]
			if diff := cmp.Diff(tc.wantLogTail, got); diff != "" {
				t.Errorf("%s: log tail -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
