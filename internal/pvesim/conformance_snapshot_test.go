package pvesim_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// snapshotRoutes are the QEMU snapshot routes whose snapname PVE checks
// against pve-snapshot-name before any handler runs.
var snapshotRoutes = []struct{ method, path string }{
	{http.MethodPost, "/nodes/{node}/qemu/{vmid}/snapshot"},
	{http.MethodDelete, "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}"},
	{http.MethodGet, "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/config"},
	{http.MethodPut, "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/config"},
	{http.MethodPost, "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback"},
}

// The simulator's snapshot-name check is PVE's schema for snapname on every
// snapshot route: format pve-configid, at most 40 characters.
func TestSnapshotNameRulesMatchPVESchema(t *testing.T) {
	idx := loadSchemaRaw(t)
	for _, r := range snapshotRoutes {
		node, ok := idx[r.path]
		if !ok {
			t.Errorf("%s not in the schema", r.path)
			continue
		}
		p := node.Info[r.method].Parameters.Properties["snapname"]
		if p.Format != "pve-configid" || p.MaxLength != 40 {
			t.Errorf("%s %s snapname: format %v maxLength %v; the simulator checks pve-configid and 40", r.method, r.path, p.Format, p.MaxLength)
		}
	}
}

type rawSchemaNode struct {
	Path string `json:"path"`
	Info map[string]struct {
		Parameters struct {
			Properties map[string]struct {
				Format    any `json:"format"`
				MaxLength int `json:"maxLength"`
			} `json:"properties"`
		} `json:"parameters"`
	} `json:"info"`
	Children []rawSchemaNode `json:"children"`
}

// loadSchemaRaw indexes the schema by path with the parameter fields this
// file needs (format, maxLength), which loadSchema does not keep.
func loadSchemaRaw(t *testing.T) map[string]rawSchemaNode {
	return loadSchemaIndex(t, func(n rawSchemaNode) (string, []rawSchemaNode) { return n.Path, n.Children })
}

// Snapshot names: what PVE's schema refuses (400, per parameter), what its
// handler refuses (current exactly, pending in any case; 500) and what it
// takes, "Current" included.
func TestSnapshotNames(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 710, Config: map[string]string{"name": "n"}}); err != nil {
		t.Fatal(err)
	}
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
		// qemu-server src/PVE/API2/Qemu.pm, snapshot: `die "unable to use snapshot name
		// 'pending' (reserved name)\n" if lc($snapname) eq 'pending'`: the text is literal.
		{"pending is reserved in any case, and named literally", "PenDing", http.StatusInternalServerError, "unable to use snapshot name 'pending' (reserved name)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := rawCall(t, sim, http.MethodPost, "/nodes/pve/qemu/710/snapshot", "application/x-www-form-urlencoded", form("snapname", tc.name), tokenHeader())
			got := res.message()
			if res.Status == http.StatusBadRequest {
				got = res.errors()["snapname"]
			}
			if res.Status != tc.status || !strings.HasPrefix(got, tc.message) {
				t.Errorf("%s: POST snapshot %q = %d %q, want %d %q", tc.reason, tc.name, res.Status, got, tc.status, tc.message)
			}
		})
	}
	res := rawCall(t, sim, http.MethodPost, "/nodes/pve/qemu/710/snapshot/a.b/rollback", "", "", tokenHeader())
	if res.Status != http.StatusBadRequest || !strings.HasPrefix(res.errors()["snapname"], "invalid format") {
		t.Errorf("rollback to an invalid name = %d %v, want the schema's 400", res.Status, res.errors())
	}
}

// While PVE's snapshot task runs, the snapshot is listed with snapstate
// prepare (PVE writes it to the config first) and the guest's parent has not
// moved; a rollback to it fails its task; once the task ends the state goes
// and the parent moves.
func TestSnapshotPrepareState(t *testing.T) {
	sim := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmsnapshot": 400 * time.Millisecond}})
	if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 711, Config: map[string]string{"name": "p"}}); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	vm := vmOf(t, c, "pve", 711)
	task, err := vm.NewSnapshot(ctx, "slow")
	if err != nil {
		t.Fatal(err)
	}
	list := func() map[string]map[string]any {
		res := rawCall(t, sim, http.MethodGet, "/nodes/pve/qemu/711/snapshot", "", "", tokenHeader())
		var items []map[string]any
		if err := json.Unmarshal(res.Body["data"], &items); err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]any{}
		for _, it := range items {
			out[it["name"].(string)] = it
		}
		return out
	}
	eventually(t, "the snapshot listed in state prepare", func() bool { return list()["slow"]["snapstate"] == "prepare" })
	if p := list()["current"]["parent"]; p != nil {
		t.Errorf("during the task the guest's parent is %v, want none yet", p)
	}
	rb, err := vm.Snapshot("slow").Rollback(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitTask(t, c, rb); err == nil || !strings.Contains(err.Error(), "unable to rollback to incomplete snapshot (snapstate = prepare)") {
		t.Errorf("rollback to a snapshot in the making: %v, want PVE's incomplete-snapshot failure", err)
	}
	if err := waitTask(t, c, task); err != nil {
		t.Fatal(err)
	}
	after := list()
	if _, ok := after["slow"]["snapstate"]; ok || after["current"]["parent"] != "slow" {
		t.Errorf("after the task: slow %v, current %v; want no snapstate and parent slow", after["slow"], after["current"])
	}
}

// A rollback stops the VM; a snapshot with RAM starts it again whatever
// its state before, one without leaves it stopped unless start=1.
func TestRollbackPower(t *testing.T) {
	cases := map[string]struct {
		reason      string
		vmstate     bool
		stopFirst   bool
		start       bool
		wantRunning bool
	}{
		"WithoutRAM":         {reason: "a running VM is stopped by a rollback to a snapshot without RAM", wantRunning: false},
		"WithoutRAMStart":    {reason: "start=1 starts it after the rollback", start: true, wantRunning: true},
		"WithRAM":            {reason: "a snapshot with RAM resumes the VM", vmstate: true, wantRunning: true},
		"WithRAMFromStopped": {reason: "a snapshot with RAM starts even a stopped VM", vmstate: true, stopFirst: true, wantRunning: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sim := startSim(t, pvesim.Options{})
			if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 712, Running: true, Config: map[string]string{"name": "r"}}); err != nil {
				t.Fatal(err)
			}
			c := tokenClient(t, sim)
			ctx := testCtx(t)
			vm := vmOf(t, c, "pve", 712)
			res := rawCall(t, sim, http.MethodPost, "/nodes/pve/qemu/712/snapshot", "application/x-www-form-urlencoded",
				form("snapname", "s1", "vmstate", boolParam(tc.vmstate)), tokenHeader())
			if res.Status != http.StatusOK {
				t.Fatalf("snapshot: %d %s", res.Status, res.Text)
			}
			waitUPID(t, sim, res)
			if tc.stopFirst {
				task, err := vm.Stop(ctx)
				if err != nil || waitTask(t, c, task) != nil {
					t.Fatalf("stop: %v", err)
				}
			}
			res = rawCall(t, sim, http.MethodPost, "/nodes/pve/qemu/712/snapshot/s1/rollback", "application/x-www-form-urlencoded",
				form("start", boolParam(tc.start)), tokenHeader())
			if res.Status != http.StatusOK {
				t.Fatalf("rollback: %d %s", res.Status, res.Text)
			}
			if exit := waitUPID(t, sim, res); exit != "OK" {
				t.Fatalf("rollback task: %s", exit)
			}
			if g, _ := sim.Guest(712); (g.Status == "running") != tc.wantRunning {
				t.Errorf("%s: status %s, want running %v", tc.reason, g.Status, tc.wantRunning)
			}
		})
	}
}

func boolParam(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// waitUPID waits for the task whose UPID res carries and returns its exit
// status.
func waitUPID(t *testing.T, sim *pvesim.Server, res rawResponse) string {
	t.Helper()
	var upid string
	if err := json.Unmarshal(res.Body["data"], &upid); err != nil || upid == "" {
		t.Fatalf("no UPID in %s", res.Text)
	}
	var exit string
	eventually(t, "task "+upid, func() bool {
		st := rawCall(t, sim, http.MethodGet, "/nodes/pve/tasks/"+url.PathEscape(upid)+"/status", "", "", tokenHeader())
		var data struct{ Status, Exitstatus string }
		if err := json.Unmarshal(st.Body["data"], &data); err != nil {
			return false
		}
		exit = data.Exitstatus
		return data.Status == "stopped"
	})
	return exit
}
