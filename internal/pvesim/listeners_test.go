package pvesim_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// getAt sends an authenticated GET to one listener's base URL and returns
// the status code and body.
func getAt(t *testing.T, hc *http.Client, base, path string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, base+"/api2/json"+path, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "PVEAPIToken="+testTokenID+"="+testSecret)
	res, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), nil
}

func TestListenersShareOneClusterAndGoDownAndUp(t *testing.T) {
	sim := startSim(t, pvesim.Options{Nodes: []string{"pve", "pve2"}, ExtraListen: []string{"127.0.0.1:0", "127.0.0.1:0"}})
	urls := sim.URLs()
	if len(urls) != 3 || urls[0] != sim.URL() {
		t.Fatalf("URLs = %v", urls)
	}
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: "pve", VMID: 4100, Config: map[string]string{"name": "shared"}}); err != nil {
		t.Fatal(err)
	}
	hc := httpClientFor(t, sim)
	for _, u := range urls {
		code, body, err := getAt(t, hc, u, "/nodes/pve/qemu/4100/config")
		if err != nil || code != http.StatusOK || !strings.Contains(body, `"name":"shared"`) {
			t.Fatalf("%s: every listener serves the same state: %v %d %s", u, err, code, body)
		}
	}

	// Down through the admin API of the listener itself: the answer still
	// arrives, then connecting is refused there while the others serve.
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, urls[1]+"/_sim/listeners/1/down", http.NoBody)
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("down through its own listener: %v", err)
	}
	_ = res.Body.Close()
	// Not PVE's code but the network's: a node whose pveproxy is gone refuses
	// connections. The listener closes once its answer is written: a new connection made
	// right after may still race that close, so try fresh connections for a
	// moment (keep-alive ones are cut, not refused).
	fresh := httpClientFor(t, sim)
	fresh.Transport.(*http.Transport).DisableKeepAlives = true
	var downErr error
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, _, downErr = getAt(t, fresh, urls[1], "/version"); errors.Is(downErr, syscall.ECONNREFUSED) {
			break
		}
	}
	if !errors.Is(downErr, syscall.ECONNREFUSED) {
		t.Fatalf("GET on a down listener: err = %v, want connection refused", downErr)
	}
	if code, _, err := getAt(t, hc, urls[2], "/version"); err != nil || code != http.StatusOK {
		t.Fatalf("the other listener: %v %d", err, code)
	}
	var views []pvesim.ListenerView
	r := adminCall(t, sim, http.MethodGet, "/_sim/listeners", "")
	if err := json.Unmarshal(r.Body["data"], &views); err != nil || len(views) != 3 || views[1].Up || !views[0].Up {
		t.Fatalf("GET /_sim/listeners = %s (%v)", r.Body["data"], err)
	}

	// Kept-alive connections are cut too, as when a node goes away.
	if code, _, err := getAt(t, hc, urls[2], "/version"); err != nil || code != http.StatusOK {
		t.Fatalf("warm a connection: %v %d", err, code)
	}
	if err := sim.ListenerDown(2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := getAt(t, hc, urls[2], "/version"); err == nil {
		t.Fatal("a kept-alive connection to a down listener still answers")
	}

	if r := adminCall(t, sim, http.MethodPost, "/_sim/listeners/1/up", ""); r.Status != http.StatusOK {
		t.Fatalf("up: %d", r.Status)
	}
	if err := sim.ListenerUp(2); err != nil {
		t.Fatal(err)
	}
	for _, u := range urls {
		if code, _, err := getAt(t, hc, u, "/version"); err != nil || code != http.StatusOK {
			t.Fatalf("%s after up, on the same address: %v %d", u, err, code)
		}
	}
	if r := adminCall(t, sim, http.MethodPost, "/_sim/listeners/7/down", ""); r.Status != http.StatusNotFound {
		t.Errorf("down of a listener that does not exist: %d, want 404", r.Status)
	}
}

func TestOfflineNodeAnswers595AndShowsUnknownGuests(t *testing.T) {
	sim := startSim(t, pvesim.Options{Nodes: []string{"pve", "pve2"}})
	for _, g := range []pvesim.GuestSeed{
		{Kind: "qemu", Node: "pve2", VMID: 4200, Config: map[string]string{"name": "far"}, Running: true},
		{Kind: "qemu", Node: "pve", VMID: 4201, Config: map[string]string{"name": "near"}, Running: true},
	} {
		if err := sim.AddGuest(g); err != nil {
			t.Fatal(err)
		}
	}
	if r := adminCall(t, sim, http.MethodPost, "/_sim/nodes/pve2/offline", ""); r.Status != http.StatusOK {
		t.Fatalf("offline: %d %v", r.Status, r.Body)
	}
	for _, p := range []string{"/nodes/pve2/qemu/4200/status/current", "/nodes/pve2/status"} {
		r := rawCall(t, sim, http.MethodGet, p, "", "", tokenHeader())
		if r.StatusLine != "595 No route to host" || r.Text != "" {
			t.Errorf("GET %s on an offline node: %q %q, want pveproxy's 595 and no body", p, r.StatusLine, r.Text)
		}
	}
	r := rawCall(t, sim, http.MethodPost, "/nodes/pve2/qemu/4200/status/stop", "", "", tokenHeader())
	if r.Status != 595 {
		t.Errorf("a write to an offline node: %q", r.StatusLine)
	}
	if g, _ := sim.Guest(4200); g.Status != "running" {
		t.Errorf("the write reached the offline node: status %q", g.Status)
	}
	// The rest of the cluster answers; credentials are still checked first.
	if r := rawCall(t, sim, http.MethodGet, "/nodes/pve/qemu/4201/status/current", "", "", tokenHeader()); r.Status != http.StatusOK {
		t.Errorf("the online node: %q", r.StatusLine)
	}
	if r := rawCall(t, sim, http.MethodGet, "/nodes/pve2/status", "", "", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("unauthenticated request for an offline node: %q, want 401", r.StatusLine)
	}

	rows := clusterRows(t, sim)
	if got := rows["node/pve2"]["status"]; got != "offline" {
		t.Errorf("node/pve2 status = %v, want offline", got)
	}
	if got := rows["qemu/4200"]["status"]; got != "unknown" {
		t.Errorf("guest on the offline node: status %v, want unknown", got)
	}
	if got := rows["qemu/4201"]["status"]; got != "running" {
		t.Errorf("guest on the online node: status %v, want running", got)
	}

	r = adminCall(t, sim, http.MethodPost, "/_sim/nodes/pve2/offline", `{"reason":"Connection refused"}`)
	if r.Status != http.StatusOK {
		t.Fatalf("offline with a reason: %d", r.Status)
	}
	if r := rawCall(t, sim, http.MethodGet, "/nodes/pve2/status", "", "", tokenHeader()); r.StatusLine != "595 Connection refused" {
		t.Errorf("reason: %q", r.StatusLine)
	}
	if r := adminCall(t, sim, http.MethodPost, "/_sim/nodes/pve2/online", ""); r.Status != http.StatusOK {
		t.Fatalf("online: %d", r.Status)
	}
	if r := rawCall(t, sim, http.MethodGet, "/nodes/pve2/qemu/4200/status/current", "", "", tokenHeader()); r.Status != http.StatusOK {
		t.Errorf("back online: %q", r.StatusLine)
	}
	if got := clusterRows(t, sim)["qemu/4200"]["status"]; got != "running" {
		t.Errorf("guest back online: status %v, want running", got)
	}
	if r := adminCall(t, sim, http.MethodPost, "/_sim/nodes/nowhere/offline", ""); r.Status == http.StatusOK {
		t.Error("a node outside the cluster went offline")
	}
}

func clusterRows(t *testing.T, sim *pvesim.Server) map[string]map[string]any {
	t.Helper()
	r := rawCall(t, sim, http.MethodGet, "/cluster/resources", "", "", tokenHeader())
	var list []map[string]any
	if err := json.Unmarshal(r.Body["data"], &list); err != nil {
		t.Fatalf("/cluster/resources: %v", err)
	}
	out := map[string]map[string]any{}
	for _, row := range list {
		id, _ := row["id"].(string)
		out[id] = row
	}
	return out
}
