/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package pvesim_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// qemu-server's _do_vm_stop: a guest that never sees the power button (acpi: 0, no agent)
// is waited for until the timeout; then the task fails, or with forceStop the guest is
// terminated with a plain Perl warn in the log, and the task ends OK (only $rpcenv->warn
// counts towards TASK WARNINGS: pve-common src/PVE/RESTEnvironment.pm, sub warn). A guest with an agent configured that is
// not up yet fails at once, without waiting.
func TestShutdownFollowsQemuServer(t *testing.T) {
	sim := startSim(t, pvesim.Options{AgentStartDelay: time.Hour})
	seed := func(vmid int, cfg map[string]string) {
		t.Helper()
		cfg["name"] = "g"
		if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: vmid, Running: true, Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	seed(500, map[string]string{})
	seed(501, map[string]string{"acpi": "0"})
	seed(502, map[string]string{"acpi": "0"})
	seed(503, map[string]string{"agent": "1"})

	cases := map[string]struct {
		vmid       string
		params     string
		wantExit   string
		wantLog    string
		minTime    time.Duration
		wantStatus string
	}{
		"ReactsToThePowerButton": {vmid: "500", params: "timeout=1", wantExit: "OK", wantStatus: "stopped"},
		"IgnoresItUntilTheTimeout": {
			vmid: "501", params: "timeout=1", wantExit: "VM quit/powerdown failed - got timeout",
			wantLog: "TASK ERROR: VM quit/powerdown failed - got timeout", minTime: time.Second, wantStatus: "running",
		},
		"ForceStopTerminatesItAfterTheTimeout": {
			vmid: "502", params: "timeout=1&forceStop=1", wantExit: "OK",
			wantLog: "VM still running - terminating now with SIGTERM", minTime: time.Second, wantStatus: "stopped",
		},
		"AgentNotRunningFailsAtOnce": {
			vmid: "503", params: "timeout=30", wantExit: "VM quit/powerdown failed",
			wantLog: "TASK ERROR: VM quit/powerdown failed", wantStatus: "running",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			res := rawCall(t, sim, http.MethodPost, "/nodes/pve/qemu/"+tc.vmid+"/status/shutdown",
				"application/x-www-form-urlencoded", tc.params, tokenHeader())
			var upid string
			if res.Status != http.StatusOK || jsonUnmarshal(res.Body["data"], &upid) != nil {
				t.Fatalf("shutdown: %d %s", res.Status, res.Text)
			}
			var status map[string]any
			eventually(t, "the shutdown task ends", func() bool {
				status = getMap(t, sim, "/nodes/pve/tasks/"+url.PathEscape(upid)+"/status")
				return status["status"] == "stopped"
			})
			if took := time.Since(start); took < tc.minTime || (tc.minTime == 0 && took > 5*time.Second) {
				t.Errorf("the task took %v, want at least %v (and a guest that reacts or fails at once far less than the 30 s timeout)", took, tc.minTime)
			}
			if status["exitstatus"] != tc.wantExit {
				t.Errorf("exit status %q, want %q", status["exitstatus"], tc.wantExit)
			}
			if tc.wantLog != "" {
				if log := taskLogText(t, sim, upid); !strings.Contains(log, tc.wantLog) {
					t.Errorf("task log %q lacks %q", log, tc.wantLog)
				}
			}
			if cur := getMap(t, sim, "/nodes/pve/qemu/"+tc.vmid+"/status/current"); cur["status"] != tc.wantStatus {
				t.Errorf("guest status %v, want %s", cur["status"], tc.wantStatus)
			}
		})
	}
}

func taskLogText(t *testing.T, sim *pvesim.Server, upid string) string {
	t.Helper()
	entries := getData(t, sim, "/nodes/pve/tasks/"+url.PathEscape(upid)+"/log").([]any)
	lines := make([]string, 0, len(entries))
	for _, l := range entries {
		lines = append(lines, l.(map[string]any)["t"].(string))
	}
	return strings.Join(lines, "\n")
}
