package pvesim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const cloneHoldBody = `{"holds":[{"method":"POST","pathPattern":"/nodes/*/qemu/*/clone"}]}`

// decodeData unmarshals the "data" of an admin answer, failing the test on a non-200.
func decodeData(t *testing.T, res rawResponse, out any) {
	t.Helper()
	if res.Status != http.StatusOK {
		t.Fatalf("admin call: %d %s", res.Status, res.message())
	}
	if err := json.Unmarshal(res.Body["data"], out); err != nil {
		t.Fatalf("admin answer %s: %v", res.Body["data"], err)
	}
}

// armHolds arms holds through PUT /_sim/faults and returns them as armed.
func armHolds(t *testing.T, sim *pvesim.Server, body string) []pvesim.HoldView {
	t.Helper()
	var out struct {
		Holds []pvesim.HoldView `json:"holds"`
	}
	decodeData(t, adminCall(t, sim, http.MethodPut, "/_sim/faults", body), &out)
	for _, h := range out.Holds {
		if h.ID == 0 || h.State != pvesim.HoldArmed {
			t.Fatalf("armed hold: %+v", h)
		}
	}
	return out.Holds
}

// listHolds calls GET /_sim/holds with the query.
func listHolds(t *testing.T, sim *pvesim.Server, query string) []pvesim.HoldView {
	t.Helper()
	var views []pvesim.HoldView
	decodeData(t, adminCall(t, sim, http.MethodGet, "/_sim/holds"+query, ""), &views)
	return views
}

type cloneResult struct {
	task *proxmox.Task
	err  error
}

// cloneAsync clones template 9000 to newID with go-proxmox in the background.
func cloneAsync(t *testing.T, sim *pvesim.Server, newID int) <-chan cloneResult {
	t.Helper()
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	done := make(chan cloneResult, 1)
	go func() {
		_, task, err := nodeRef(c).VirtualMachineRef(9000).Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: newID})
		done <- cloneResult{task: task, err: err}
	}()
	return done
}

func wantStillWaiting(t *testing.T, done <-chan cloneResult) {
	t.Helper()
	select {
	case r := <-done:
		t.Fatalf("the response must be held, the client got %+v", r)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestHoldOverHTTPAppliesTheCloneThenReleases(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddTemplate("pve", 9000, "t"); err != nil {
		t.Fatal(err)
	}
	armed := armHolds(t, sim, cloneHoldBody)
	if len(armed) != 1 || armed[0].Method != http.MethodPost || armed[0].PathPattern != "/nodes/*/qemu/*/clone" {
		t.Fatalf("PUT /_sim/faults answers the armed holds: %+v", armed)
	}
	id := armed[0].ID
	if got := listHolds(t, sim, ""); len(got) != 1 || got[0].State != pvesim.HoldArmed || !got[0].HeldSince.IsZero() {
		t.Fatalf("listing before any request: %+v", got)
	}

	done := cloneAsync(t, sim, 101)
	held := listHolds(t, sim, fmt.Sprintf("?wait=held&id=%d&timeout=30s", id))
	if len(held) != 1 || held[0].State != pvesim.HoldHeld || held[0].Path != "/nodes/pve/qemu/9000/clone" || held[0].HeldSince.IsZero() {
		t.Fatalf("long poll for held: %+v", held)
	}
	if _, ok := sim.Guest(101); !ok {
		t.Fatal("a held clone must already be applied in the simulator")
	}
	wantStillWaiting(t, done)

	var released pvesim.HoldView
	decodeData(t, adminCall(t, sim, http.MethodPost, fmt.Sprintf("/_sim/holds/%d/release", id), ""), &released)
	if released.State != pvesim.HoldReleased {
		t.Fatalf("release answer: %+v", released)
	}
	r := <-done
	if r.err != nil || r.task == nil || !strings.HasPrefix(string(r.task.UPID), "UPID:pve:") {
		t.Fatalf("released clone: task %+v err %v", r.task, r.err)
	}
	if err := waitTask(t, tokenClient(t, sim), r.task); err != nil {
		t.Fatalf("clone task: %v", err)
	}
	if got := listHolds(t, sim, ""); len(got) != 1 || got[0].State != pvesim.HoldReleased {
		t.Fatalf("listing after release: %+v", got)
	}
}

func TestHoldAdminErrorsAndDisarming(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	for _, bad := range []string{`{"holds":[{"pathPattern":"^("}]}`, `{"drops":[{"pathPattern":"/nodes/["}]}`} {
		if res := adminCall(t, sim, http.MethodPut, "/_sim/faults", bad); res.Status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, res.Status)
		}
	}
	if got := sim.Holds(); len(got) != 0 {
		t.Fatalf("a rejected PUT arms nothing: %+v", got)
	}
	for query, want := range map[string]int{
		"?wait=done":                 http.StatusBadRequest,
		"?wait=held&timeout=forever": http.StatusBadRequest,
		"?id=x":                      http.StatusBadRequest,
		"?wait=held&timeout=50ms":    http.StatusGatewayTimeout,
		"?wait=held&id=7":            http.StatusNotFound,
	} {
		if res := adminCall(t, sim, http.MethodGet, "/_sim/holds"+query, ""); res.Status != want {
			t.Errorf("GET /_sim/holds%s: %d, want %d", query, res.Status, want)
		}
	}
	if res := adminCall(t, sim, http.MethodPost, "/_sim/holds/7/release", ""); res.Status != http.StatusNotFound {
		t.Errorf("release of an unknown hold: %d", res.Status)
	}

	armed := armHolds(t, sim, `{"holds":[{"method":"GET","pathPattern":"/version"},{"method":"GET","pathPattern":"/nodes"}]}`)
	var all []pvesim.HoldView
	decodeData(t, adminCall(t, sim, http.MethodPost, "/_sim/holds/release-all", ""), &all)
	if len(all) != 2 || all[0].State != pvesim.HoldReleased || all[1].State != pvesim.HoldReleased || all[0].ID != armed[0].ID {
		t.Fatalf("release-all: %+v", all)
	}
	c := tokenClient(t, sim)
	if _, err := c.Version(testCtx(t)); err != nil {
		t.Fatalf("a hold released while armed is disarmed: %v", err)
	}
	if got := listHolds(t, sim, fmt.Sprintf("?id=%d", armed[0].ID)); len(got) != 1 || got[0].Path != "" {
		t.Fatalf("a disarmed hold catches nothing: %+v", got)
	}
}

func TestHoldResetReleasesAndForgets(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddTemplate("pve", 9000, "t"); err != nil {
		t.Fatal(err)
	}
	sim.SaveBaseline()
	id := armHolds(t, sim, cloneHoldBody)[0].ID
	done := cloneAsync(t, sim, 101)
	listHolds(t, sim, fmt.Sprintf("?wait=held&id=%d", id))
	if res := adminCall(t, sim, http.MethodPost, "/_sim/reset", ""); res.Status != http.StatusOK {
		t.Fatalf("reset: %d", res.Status)
	}
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("a reset sends the held response: %v", r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a reset must release held responses")
	}
	if got := listHolds(t, sim, ""); len(got) != 0 {
		t.Fatalf("a reset forgets holds: %+v", got)
	}
}

// Close must leave no handler parked on a hold and no long poll behind: the goroutine
// count returns to what it was before the simulator started.
func TestHoldCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	sim, err := pvesim.Start(pvesim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sim.AddToken(testTokenID, testSecret)
	if err := sim.AddTemplate("pve", 9000, "t"); err != nil {
		t.Fatal(err)
	}
	armed := armHolds(t, sim, `{"holds":[{"method":"POST","pathPattern":"/nodes/*/qemu/*/clone"},{"method":"GET","pathPattern":"/nodes"}]}`)
	done := cloneAsync(t, sim, 101)
	listHolds(t, sim, fmt.Sprintf("?wait=held&id=%d", armed[0].ID))
	poll := make(chan error, 1)
	client := httpClientFor(t, sim)
	go func() {
		res, err := client.Get(sim.URL() + fmt.Sprintf("/_sim/holds?wait=held&id=%d&timeout=5m", armed[1].ID))
		if err == nil {
			res.Body.Close()
		}
		poll <- err
	}()
	time.Sleep(100 * time.Millisecond) // let the poll reach the server
	sim.Close()
	for name, ch := range map[string]<-chan struct{}{"held clone": drain(done), "long poll": drain(poll)} {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s still waiting after Close", name)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// drain signals when ch yields a value (or is closed).
func drain[T any](ch <-chan T) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		<-ch
		close(out)
	}()
	return out
}
