package pveconformance

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Snapshot names: what PVE's schema refuses (400, per parameter: snapname is
// pve-snapshot-name, pve-common src/PVE/JSONSchema.pm: format pve-configid,
// whose check dies "invalid configuration ID '$id'", and maxLength 40), what
// its handler refuses (qemu-server src/PVE/API2/Qemu.pm snapshot: current
// exactly, pending in any case; 500) and what it takes, "Current" included.
func TestSnapshotNames(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/snapshot snapname", "POST /nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback")
	id := tg.createVM("snapnames")
	cases := []struct {
		reason, name string
		status       int
		message      string // top-level message (500) or snapname's error (400)
	}{
		{"two characters are the least", "ab", http.StatusOK, ""},
		{"upper case, digits, '-' and '_' are allowed", "Pre-Upgrade_2", http.StatusOK, ""},
		{"forty characters are the most", strings.Repeat("a", 40), http.StatusOK, ""},
		{"only the lower-case current is reserved", "Current", http.StatusOK, ""},
		{"one character is not a configuration ID", "a", http.StatusBadRequest, "invalid format - invalid configuration ID 'a'"},
		{"a digit first is not", "1ab", http.StatusBadRequest, "invalid format - invalid configuration ID '1ab'"},
		{"a dot is not", "a.b", http.StatusBadRequest, "invalid format - invalid configuration ID 'a.b'"},
		{"an underscore first is not", "_ab", http.StatusBadRequest, "invalid format - invalid configuration ID '_ab'"},
		{"forty-one characters are too long", strings.Repeat("b", 41), http.StatusBadRequest, "value may only be 40 characters long"},
		{"current is reserved", "current", http.StatusInternalServerError, "unable to use snapshot name 'current' (reserved name)"},
		{"pending is reserved", "pending", http.StatusInternalServerError, "unable to use snapshot name 'pending' (reserved name)"},
		// `die "unable to use snapshot name 'pending' (reserved name)\n" if lc($snapname) eq 'pending'`: the text is literal.
		{"pending is reserved in any case, and named literally", "PenDing", http.StatusInternalServerError, "unable to use snapshot name 'pending' (reserved name)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := tg.in(t)
			res := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/snapshot"), Params("snapname", tc.name))
			got := res.Message()
			if res.Status == http.StatusBadRequest {
				got = res.Errors()["snapname"]
			}
			if res.Status != tc.status || !strings.HasPrefix(got, tc.message) {
				t.Errorf("%s: POST snapshot %q = %s %q, want %d %q", tc.reason, tc.name, res.StatusLine, got, tc.status, tc.message)
			}
			if res.Status == http.StatusOK {
				tg.task(res.UPID())
			}
		})
	}
	res := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/snapshot/a.b/rollback"), nil)
	if res.Status != http.StatusBadRequest || !strings.HasPrefix(res.Errors()["snapname"], "invalid format") {
		t.Errorf("rollback to an invalid name = %s %v, want the schema's 400", res.StatusLine, res.Errors())
	}
}

// While PVE's snapshot task runs, the snapshot is listed with snapstate
// prepare (pve-guest-common src/PVE/AbstractConfig.pm __snapshot_prepare
// writes it to the config first) and the guest's parent has not moved; a
// rollback to it fails its task (snapshot_rollback: "unable to rollback to
// incomplete snapshot (snapstate = prepare)"); once the task ends
// (__snapshot_commit) the state goes and the parent moves.
func TestSnapshotPrepareState(t *testing.T) {
	tg := target(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmsnapshot": 400 * time.Millisecond}})
	tg.requireSim("needs a snapshot task slow enough to be seen in the making")
	covers(tg, "GET /nodes/{node}/qemu/{vmid}/snapshot", "POST /nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback")
	id := tg.createVM("snapprepare")
	res := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/snapshot"), Params("snapname", "slow"))
	if res.Status != http.StatusOK {
		t.Fatalf("snapshot: %s %s", res.StatusLine, res.Text)
	}
	list := func() map[string]map[string]any {
		var items []map[string]any
		tg.data(tg.guestPath("qemu", id, "/snapshot"), nil, &items)
		out := map[string]map[string]any{}
		for _, it := range items {
			out[it["name"].(string)] = it
		}
		return out
	}
	tg.eventually("the snapshot listed in state prepare", func() bool { return list()["slow"]["snapstate"] == "prepare" })
	if p := list()["current"]["parent"]; p != nil {
		t.Errorf("during the task the guest's parent is %v, want none yet", p)
	}
	rb := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/snapshot/slow/rollback"), nil)
	if exit := tg.task(rb.UPID()); !strings.Contains(exit, "unable to rollback to incomplete snapshot (snapstate = prepare)") {
		t.Errorf("rollback to a snapshot in the making ended %q, want PVE's incomplete-snapshot failure", exit)
	}
	if exit := tg.task(res.UPID()); exit != "OK" {
		t.Fatalf("snapshot ended %q", exit)
	}
	after := list()
	if _, ok := after["slow"]["snapstate"]; ok || after["current"]["parent"] != "slow" {
		t.Errorf("after the task: slow %v, current %v; want no snapstate and parent slow", after["slow"], after["current"])
	}
}

// A rollback stops the VM; a snapshot with RAM starts it again whatever its
// state before, one without leaves it stopped unless start=1 (pve-guest-common
// src/PVE/AbstractConfig.pm snapshot_rollback: __snapshot_rollback_vm_stop,
// then __snapshot_rollback_vm_start with the vmstate; qemu-server
// src/PVE/API2/Qemu.pm rollback: "VMs will be automatically started if the
// snapshot includes RAM").
func TestRollbackPower(t *testing.T) {
	cases := map[string]struct {
		reason      string
		vmstate     string
		stopFirst   bool
		start       string
		wantRunning bool
	}{
		"WithoutRAM":         {reason: "a running VM is stopped by a rollback to a snapshot without RAM", vmstate: "0", start: "0", wantRunning: false},
		"WithoutRAMStart":    {reason: "start=1 starts it after the rollback", vmstate: "0", start: "1", wantRunning: true},
		"WithRAM":            {reason: "a snapshot with RAM resumes the VM", vmstate: "1", start: "0", wantRunning: true},
		"WithRAMFromStopped": {reason: "a snapshot with RAM starts even a stopped VM", vmstate: "1", stopFirst: true, start: "0", wantRunning: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := target(t, pvesim.Options{})
			covers(tg, "POST /nodes/{node}/qemu/{vmid}/snapshot snapname vmstate", "POST /nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback start")
			id := tg.startVM("rollback")
			tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/snapshot"), Params("snapname", "s1", "vmstate", tc.vmstate))
			if tc.stopFirst {
				tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/stop"), nil)
			}
			tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/snapshot/s1/rollback"), Params("start", tc.start))
			var cur map[string]any
			tg.data(tg.guestPath("qemu", id, "/status/current"), nil, &cur)
			if (cur["status"] == "running") != tc.wantRunning {
				t.Errorf("%s: status %v, want running %v", tc.reason, cur["status"], tc.wantRunning)
			}
		})
	}
}
