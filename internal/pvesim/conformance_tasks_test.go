package pvesim_test

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

// readTaskLog reads GET .../tasks/{upid}/log with query q and returns the lines and total.
func readTaskLog(t *testing.T, sim *pvesim.Server, upid, q string) ([]logLine, int) {
	t.Helper()
	path := "/nodes/pve/tasks/" + url.PathEscape(upid) + "/log"
	if q != "" {
		path += "?" + q
	}
	res := rawCall(t, sim, http.MethodGet, path, "", "", tokenHeader())
	if res.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, res.Status, res.Text)
	}
	var lines []logLine
	if err := json.Unmarshal(res.Body["data"], &lines); err != nil {
		t.Fatalf("data of %s: %v (%s)", path, err, res.Text)
	}
	raw, ok := res.Body["total"]
	if !ok {
		t.Fatalf("GET %s carries no total beside data: %s", path, res.Text)
	}
	var total int
	if err := json.Unmarshal(raw, &total); err != nil {
		t.Fatalf("total of %s: %v", path, err)
	}
	return lines, total
}

// The task log answer follows pve-manager PVE/API2/Tasks.pm, read_task_log, over pve-common
// src/PVE/Tools.pm, dump_logfile / dump_logfile_by_filehandle: lines from start (default 0),
// at most limit (default 50; `read_until_end => $limit == 0`, so limit=0 reads to the end),
// numbered n from 1; total ($rpcenv->set_result_attrib('total', $count)) counts every line of
// the file, also those past limit; an empty log reads as the one line "no content", total 1.
func TestTaskLogReadsLikeDumpLogfile(t *testing.T) {
	sim := startSim(t, pvesim.Options{AgentStartDelay: time.Hour})
	for vmid, cfg := range map[int]map[string]string{740: {"agent": "1"}, 741: {"acpi": "0"}} {
		cfg["name"] = "g"
		if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: vmid, Running: true, Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	// A forced shutdown whose powerdown fails at once: a finished task with a short log.
	done := startTask(t, sim, http.MethodPost, "/nodes/pve/qemu/740/status/shutdown", "timeout=30&forceStop=1")
	eventually(t, "the shutdown ends", func() bool {
		return getMap(t, sim, "/nodes/pve/tasks/"+url.PathEscape(done)+"/status")["status"] == "stopped"
	})
	full, total := readTaskLog(t, sim, done, "limit=0")
	if total != len(full) || total < 2 {
		t.Fatalf("limit=0 read %d lines of total %d: %v", len(full), total, full)
	}
	cases := map[string]struct {
		reason    string
		q         string
		wantLines []logLine
	}{
		"Default":         {"start 0, limit 50: the whole of a short log", "", full},
		"LimitZero":       {"read_until_end when limit is 0", "limit=0", full},
		"LimitOne":        {"one line; total still counts them all", "limit=1", full[:1]},
		"FromSecond":      {"n keeps the file's numbering", "start=1&limit=0", full[1:]},
		"PastTheEnd":      {"nothing to read, but the file has lines: no 'no content'", "start=100", []logLine{}},
		"StartAndLimitOK": {"start and limit together", "start=1&limit=1", full[1:2]},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lines, gotTotal := readTaskLog(t, sim, done, tc.q)
			if diff := cmp.Diff(tc.wantLines, lines); diff != "" {
				t.Errorf("%s: lines -want +got:\n%s", tc.reason, diff)
			}
			if gotTotal != total {
				t.Errorf("%s: total %d, want %d (every line of the log)", tc.reason, gotTotal, total)
			}
		})
	}

	// A shutdown waiting out its timeout has written nothing yet.
	running := startTask(t, sim, http.MethodPost, "/nodes/pve/qemu/741/status/shutdown", "timeout=30")
	lines, rtotal := readTaskLog(t, sim, running, "")
	if diff := cmp.Diff([]logLine{{N: 1, T: "no content"}}, lines); diff != "" || rtotal != 1 {
		t.Errorf("empty log of a running task: total %d, lines -want +got:\n%s", rtotal, diff)
	}
}

// startTask sends method path with form (none when "") and returns the UPID it answers.
func startTask(t *testing.T, sim *pvesim.Server, method, path, form string) string {
	t.Helper()
	ct := ""
	if form != "" {
		ct = "application/x-www-form-urlencoded"
	}
	res := rawCall(t, sim, method, path, ct, form, tokenHeader())
	var upid string
	if res.Status != http.StatusOK || jsonUnmarshal(res.Body["data"], &upid) != nil {
		t.Fatalf("%s %s: %d %s", method, path, res.Status, res.Text)
	}
	return upid
}
