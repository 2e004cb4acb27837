package pvesim_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pveraw"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// adminCall calls the /_sim/ API, which needs no PVE credentials.
func adminCall(t *testing.T, sim *pvesim.Server, method, path, body string) rawResponse {
	t.Helper()
	res, err := pveraw.Send(testCtx(t), httpClientFor(t, sim), method, sim.URL()+path, "", body, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rawResponse{res}
}

func TestHoldResponseAppliesThenHolds(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	_ = sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 100})
	c := tokenClient(t, sim)
	hold := sim.HoldResponse(http.MethodPost, "/nodes/*/qemu/*/status/start")
	done := make(chan error, 1)
	go func() {
		task, err := nodeRef(c).VirtualMachineRef(100).Start(testCtx(t))
		if err == nil && task == nil {
			err = errNilTask
		}
		done <- err
	}()
	select {
	case <-hold.Held():
	case <-time.After(30 * time.Second):
		t.Fatal("request was never held")
	}
	if g, _ := sim.Guest(100); g.Status != "running" {
		t.Fatalf("a held request is already applied: %s", g.Status)
	}
	select {
	case err := <-done:
		t.Fatalf("response must be held, got %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	hold.Release()
	if err := <-done; err != nil {
		t.Fatalf("released response: %v", err)
	}
}

func TestDropAfterApplyClosesTheConnection(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	_ = sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 100, Config: map[string]string{"name": "a"}})
	sim.DropAfterApply(http.MethodPut, "/nodes/pve/qemu/100/config")
	err := nodeRef(tokenClient(t, sim)).VirtualMachineRef(100).ConfigSync(testCtx(t), proxmox.VirtualMachineOption{Name: "name", Value: "b"})
	if err == nil {
		t.Fatal("want a transport error")
	}
	var ae *proxmox.APIError
	if asAPIError(err, &ae) {
		t.Fatalf("want no HTTP answer, got %v", err)
	}
	if g, _ := sim.Guest(100); g.Config["name"] != "b" {
		t.Fatalf("dropped request must still be applied: %v", g.Config)
	}
}

func TestFaultRules(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	_ = sim.AddTemplate("pve", 9000, "t")
	c := tokenClient(t, sim)
	res := adminCall(t, sim, http.MethodPut, "/_sim/faults", `{"rules":[
		{"method":"GET","pathPattern":"/version","errorRate":1,"status":503,"message":"maintenance"},
		{"method":"POST","pathPattern":"^/nodes/[^/]+/qemu/9000/clone$","taskFailureRate":1,"taskFailureMessage":"clone failed: disk error"}]}`)
	if res.Status != 200 {
		t.Fatalf("set faults: %d", res.Status)
	}
	_, err := c.Version(testCtx(t))
	if ae := apiErr(t, err); ae.StatusCode != http.StatusServiceUnavailable || ae.Message != "maintenance" {
		t.Fatalf("error fault: %v", err)
	}
	_, task, err := nodeRef(c).VirtualMachineRef(9000).Clone(testCtx(t), &proxmox.VirtualMachineCloneOptions{NewID: 101})
	if err != nil {
		t.Fatal(err)
	}
	wantTaskFailure(t, c, task, "clone failed: disk error")
	if _, ok := sim.Guest(101); ok {
		t.Fatal("a failed clone removes its config")
	}
	sim.SetFaults(pvesim.Faults{})
	if _, err := c.Version(testCtx(t)); err != nil {
		t.Fatalf("after clearing faults: %v", err)
	}
}

func TestAdminIdentitiesGuestsStateAndReset(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	_ = sim.AddTemplate("pve", 9000, "t")
	sim.SaveBaseline()
	c := tokenClient(t, sim)
	if _, err := c.Version(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if res := adminCall(t, sim, http.MethodPut, "/_sim/tokens", `{"tokenid":"root@pam!kubemox","secret":"rotated"}`); res.Status != 200 {
		t.Fatalf("rotate: %d", res.Status)
	}
	if _, err := c.Version(testCtx(t)); !proxmox.IsNotAuthorized(err) {
		t.Fatalf("old secret must fail after rotation: %v", err)
	}
	rotated := proxmox.NewClient(sim.APIURL(), proxmox.WithHTTPClient(httpClientFor(t, sim)), proxmox.WithAPIToken(testTokenID, "rotated"))
	if _, err := rotated.Version(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	cs := sim.Counters().ByCredentialSecret
	if cs[pvesim.CredentialFingerprint(testSecret)] != 1 || cs[pvesim.CredentialFingerprint("rotated")] != 1 {
		t.Fatalf("per-secret counters: %v", cs)
	}
	if res := adminCall(t, sim, http.MethodPut, "/_sim/users", `{"userid":"ops@pve","password":"pw"}`); res.Status != 200 {
		t.Fatalf("add user: %d", res.Status)
	}
	res := adminCall(t, sim, http.MethodPost, "/_sim/guests", `{"kind":"qemu","node":"pve","vmid":500,"config":{"name":"seeded","scsi0":"local-lvm:2"},"running":true}`)
	if res.Status != 200 {
		t.Fatalf("seed: %d %s", res.Status, res.Body["message"])
	}
	res = adminCall(t, sim, http.MethodPost, "/_sim/guests", `{"action":"drift","vmid":500,"config":{"name":"drifted","cores":"8"},"status":"stopped"}`)
	if res.Status != 200 {
		t.Fatalf("drift: %d", res.Status)
	}
	if g, _ := sim.Guest(500); g.Config["name"] != "drifted" || g.Config["cores"] != "8" || g.Status != "stopped" {
		t.Fatalf("after drift: %+v", g)
	}
	var state struct {
		Guests   []pvesim.GuestView `json:"guests"`
		Counters pvesim.Counters    `json:"counters"`
	}
	res = adminCall(t, sim, http.MethodGet, "/_sim/state", "")
	if err := json.Unmarshal(res.Body["data"], &state); err != nil || len(state.Guests) != 2 || state.Counters.ByEndpoint["GET /version"] == 0 {
		t.Fatalf("state: %v %+v", err, state)
	}
	if res := adminCall(t, sim, http.MethodPost, "/_sim/reset", ""); res.Status != 200 {
		t.Fatalf("reset: %d", res.Status)
	}
	if gs := sim.Guests(); len(gs) != 1 || gs[0].VMID != 9000 {
		t.Fatalf("reset restores the baseline: %+v", gs)
	}
	if res := adminCall(t, sim, http.MethodGet, "/_sim/nothing", ""); res.Status != 404 {
		t.Fatalf("unknown admin path: %d", res.Status)
	}
}

// LatencyRate delays only that fraction of the matching requests.
func TestFaultLatencyRate(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	c := tokenClient(t, sim)
	sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{Method: "GET", PathPattern: "/version", Latency: 100 * time.Millisecond, LatencyRate: 0.5}}})
	slow := 0
	const calls = 40
	for range calls {
		start := time.Now()
		if _, err := c.Version(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) >= 80*time.Millisecond {
			slow++
		}
	}
	// Binomial(40, 0.5) falls outside [5, 35] with probability below 1e-6.
	if slow < 5 || slow > calls-5 {
		t.Errorf("%d of %d requests delayed with LatencyRate 0.5", slow, calls)
	}
}

// faultPattern calls GET /version n times under a 50% error rule and returns which failed.
func faultPattern(t *testing.T, sim *pvesim.Server, n int) string {
	t.Helper()
	c := tokenClient(t, sim)
	var b strings.Builder
	for range n {
		if _, err := c.Version(testCtx(t)); err != nil {
			b.WriteByte('x')
		} else {
			b.WriteByte('.')
		}
	}
	return b.String()
}

// The fault dice are seeded: the same seed, given as an Option or in PUT /_sim/faults,
// draws the same hits, so a soak failure can be replayed; another seed draws others.
func TestFaultSeedReplaysTheSameDraws(t *testing.T) {
	const calls = 40
	rule := pvesim.FaultRule{Method: "GET", PathPattern: "/version", ErrorRate: 0.5}

	byOption := startSim(t, pvesim.Options{Seed: 42})
	if got := byOption.Seed(); got != 42 {
		t.Fatalf("Seed() = %d, want 42", got)
	}
	byOption.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{rule}})
	want := faultPattern(t, byOption, calls)
	if !strings.Contains(want, "x") || !strings.Contains(want, ".") {
		t.Fatalf("a 50%% rule hit all or none of %d requests: %s", calls, want)
	}

	byAdmin := startSim(t, pvesim.Options{})
	res := adminCall(t, byAdmin, http.MethodPut, "/_sim/faults",
		`{"seed":42,"rules":[{"method":"GET","pathPattern":"/version","errorRate":0.5}]}`)
	if res.Status != http.StatusOK {
		t.Fatalf("set faults: %d %s", res.Status, res.message())
	}
	var state struct {
		Seed uint64 `json:"seed"`
	}
	decodeData(t, adminCall(t, byAdmin, http.MethodGet, "/_sim/state", ""), &state)
	if state.Seed != 42 {
		t.Fatalf("GET /_sim/state seed = %d, want 42", state.Seed)
	}
	if got := faultPattern(t, byAdmin, calls); got != want {
		t.Errorf("seed 42 through the admin API drew\n%s\nnot, as through Options,\n%s", got, want)
	}

	other := startSim(t, pvesim.Options{Seed: 43})
	other.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{rule}})
	if got := faultPattern(t, other, calls); got == want {
		t.Errorf("seeds 42 and 43 drew the same %d hits: %s", calls, got)
	}
}

// Without a seed the simulator picks one and reports it.
func TestUnseededSimulatorReportsItsSeed(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if sim.Seed() == 0 {
		t.Fatal("Seed() is 0: a run without a seed could not be replayed")
	}
}

// PUT /_sim/nodes/{node}/memory sets what the node reports; a figure that
// no host reports (used above total) is refused. The figures come back as
// PVE reports a node in /cluster/resources: maxmem is the host's total and
// mem its used memory (pve-manager PVE/API2Tools.pm sub extract_node_stats,
// called by PVE/API2/Cluster.pm sub resources for type=node).
func TestAdminNodeMemory(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if res := adminCall(t, sim, http.MethodPut, "/_sim/nodes/pve/memory", `{"total": 34359738368, "used": 1073741824}`); res.Status != http.StatusOK {
		t.Fatalf("set memory: %s", res.StatusLine)
	}
	if res := adminCall(t, sim, http.MethodPut, "/_sim/nodes/pve/memory", `{"total": 1, "used": 2}`); res.Status != http.StatusBadRequest {
		t.Errorf("used above total: %s", res.StatusLine)
	}
	if res := adminCall(t, sim, http.MethodPut, "/_sim/nodes/nosuch/memory", `{"total": 1, "used": 0}`); res.Status == http.StatusOK {
		t.Errorf("unknown node: %s", res.StatusLine)
	}
	var nodes []map[string]any
	if err := tokenClient(t, sim).Get(testCtx(t), "/cluster/resources?type=node", &nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[0]["maxmem"] != float64(32<<30) || nodes[0]["mem"] != float64(1<<30) {
		t.Errorf("node rows: %v", nodes)
	}
}
