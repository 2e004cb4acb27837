package pvesim_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func TestEnvelopeHeadersAndErrors(t *testing.T) {
	sim := startSim(t, pvesim.Options{})

	res := rawCall(t, sim, http.MethodGet, "/version", "", "", tokenHeader())
	if res.StatusLine != "200 OK" || res.Header.Get("Server") != "pve-api-daemon/3.0" {
		t.Fatalf("version: %d %v", res.Status, res.Header)
	}
	if _, ok := res.Body["data"]; !ok {
		t.Fatalf("no data envelope: %s", res.Text)
	}

	res = rawCall(t, sim, http.MethodGet, "/nodes/pve/nothing", "", "", tokenHeader())
	if res.StatusLine != "501 Method 'GET /nodes/pve/nothing' not implemented" || res.message() != "Method 'GET /nodes/pve/nothing' not implemented\n" {
		t.Fatalf("unknown path: %d %q", res.Status, res.message())
	}

	res = rawCall(t, sim, http.MethodGet, "/version", "", "", nil)
	if res.StatusLine != "401 No ticket" || res.message() != "No ticket\n" {
		t.Fatalf("no credentials: %d %q", res.Status, res.message())
	}

	res = rawCall(t, sim, http.MethodDelete, "/nodes/pve/qemu/100", "application/x-www-form-urlencoded", "purge=1", tokenHeader())
	if res.Status != 501 || res.message() != "Unexpected content for method 'DELETE'\n" {
		t.Fatalf("delete with body: %d %q", res.Status, res.message())
	}

	res = rawCall(t, sim, http.MethodGet, "/cluster/resources?type=bogus", "", "", tokenHeader())
	if res.StatusLine != "400 Parameter verification failed." || res.message() != "Parameter verification failed.\n" || !strings.Contains(res.errors()["type"], "enumeration") {
		t.Fatalf("enum: %d %s", res.Status, res.Text)
	}

	res = rawCall(t, sim, http.MethodGet, "/cluster/nextid?vmid=12&extra=1", "", "", tokenHeader())
	errs := res.errors()
	if res.Status != 400 || errs["vmid"] != "value must have a minimum value of 100" ||
		errs["extra"] != "property is not defined in schema and the schema does not allow additional properties" {
		t.Fatalf("range/unknown: %d %s", res.Status, res.Text)
	}
}

func TestTicketLoginCSRFAndTokenRules(t *testing.T) {
	sim := startSim(t, pvesim.Options{})

	res := rawCall(t, sim, http.MethodPost, "/access/ticket", "application/x-www-form-urlencoded",
		form("username", testUser, "password", "wrong"), nil)
	if res.Status != 401 {
		t.Fatalf("bad password: %d", res.Status)
	}

	res = rawCall(t, sim, http.MethodPost, "/access/ticket", "application/x-www-form-urlencoded",
		form("username", testUser, "password", testPassword, "new-format", "true"), nil)
	if res.Status != 400 || res.errors()["new-format"] != "type check ('boolean') failed - got 'true'" {
		t.Fatalf("form boolean 'true' must be rejected: %d %s", res.Status, res.Text)
	}

	res = rawCall(t, sim, http.MethodPost, "/access/ticket", "application/json",
		jsonBody(t, map[string]any{"username": testUser, "password": testPassword, "new-format": true}), nil)
	if res.Status != 200 {
		t.Fatalf("login: %d %s", res.Status, res.Text)
	}
	var sess proxmox.Session
	if err := jsonUnmarshal(res.Body["data"], &sess); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sess.Ticket, "PVE:root@pam:") || sess.CSRFPreventionToken == "" {
		t.Fatalf("ticket %q csrf %q", sess.Ticket, sess.CSRFPreventionToken)
	}
	cookie := map[string]string{"Cookie": "PVEAuthCookie=" + sess.Ticket}
	if res := rawCall(t, sim, http.MethodGet, "/version", "", "", cookie); res.Status != 200 {
		t.Fatalf("GET with ticket: %d", res.Status)
	}
	res = rawCall(t, sim, http.MethodPost, "/nodes/pve/qemu/100/status/start", "", "", cookie)
	if res.Status != 401 || res.message() != "Permission denied - invalid csrf token\n" {
		t.Fatalf("POST without CSRF: %d %q", res.Status, res.message())
	}

	res = rawCall(t, sim, http.MethodPost, "/access/ticket", "application/x-www-form-urlencoded",
		form("username", testUser, "password", testPassword), tokenHeader())
	if res.Status != 403 || res.message() != "URI '/access/ticket' not available with API token, need proper ticket.\n" {
		t.Fatalf("token on allowtoken=0: %d %q", res.Status, res.message())
	}

	// A password change leaves issued tickets valid, and renewal works with the old ticket.
	sim.SetUserPassword(testUser, "new password")
	if res := rawCall(t, sim, http.MethodGet, "/version", "", "", cookie); res.Status != 200 {
		t.Fatalf("ticket after password change: %d", res.Status)
	}
	res = rawCall(t, sim, http.MethodPost, "/access/ticket", "application/x-www-form-urlencoded",
		form("username", testUser, "password", sess.Ticket), nil)
	if res.Status != 200 {
		t.Fatalf("renewal: %d %s", res.Status, res.Text)
	}
}

func TestGoProxmoxLoginFlows(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	ctx := testCtx(t)

	pc := passwordClient(t, sim)
	v, err := pc.Version(ctx)
	if err != nil || v.Version == "" {
		t.Fatalf("password client version: %v %+v", err, v)
	}
	c := sim.Counters()
	if c.ByEndpoint["POST /access/ticket"] != 1 || c.ByEndpoint["GET /version"] != 1 {
		t.Fatalf("expected one 401 then a login then the replay: %+v", c.ByEndpoint)
	}
	if c.ByCredential[testUser] != 1 || c.ByCredentialSecret[pvesim.CredentialFingerprint(testPassword)] != 1 {
		t.Fatalf("credential counters: %+v", c)
	}
	if err := pc.RefreshTicket(ctx); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	task, err := pc.NodeRef("pve").NewVirtualMachine(ctx, 100, proxmox.VirtualMachineOption{Name: "name", Value: "by-ticket"})
	if err != nil || task == nil {
		t.Fatalf("POST with ticket and CSRF token: %v", err)
	}
	if err := task.Wait(ctx, 20*time.Millisecond, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(task.UPID), ":root@pam:") {
		t.Fatalf("task user of a ticket: %s", task.UPID)
	}

	tc := tokenClient(t, sim)
	if _, err := tc.Version(ctx); err != nil {
		t.Fatalf("token client: %v", err)
	}
	if got := sim.Counters().ByCredential[testTokenID]; got != 1 {
		t.Fatalf("token counter %d", got)
	}
	sim.AddToken(testTokenID, "rotated")
	if _, err := tc.Version(ctx); !proxmox.IsNotAuthorized(err) {
		t.Fatalf("old secret after rotation: %v", err)
	}
}

func TestFormatErrorsAndTicketLifetime(t *testing.T) {
	sim := startSim(t, pvesim.Options{TicketLifetime: time.Second, AuthFailDelay: 200 * time.Millisecond})
	if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 100}); err != nil {
		t.Fatal(err)
	}
	res := rawCall(t, sim, http.MethodPut, "/nodes/pve/qemu/100/config", "application/x-www-form-urlencoded", form("name", "bad_name", "cores", "0", "net0", "virtio,bogus=1"), tokenHeader())
	errs := res.errors()
	if res.Status != 400 || errs["name"] != "invalid format - value does not look like a valid DNS name" ||
		errs["cores"] != "value must have a minimum value of 1" || !strings.Contains(errs["net0"], "bogus") {
		t.Fatalf("format errors: %d %v", res.Status, errs)
	}
	res = rawCall(t, sim, http.MethodGet, "/nodes/bad_node/qemu", "", "", tokenHeader())
	if res.Status != 400 || res.errors()["node"] != "invalid format - value does not look like a valid node name" {
		t.Fatalf("node format: %d %v", res.Status, res.errors())
	}
	res = rawCall(t, sim, http.MethodPost, "/access/ticket", "application/x-www-form-urlencoded", form("username", testUser, "password", testPassword), nil)
	var sess proxmox.Session
	if err := jsonUnmarshal(res.Body["data"], &sess); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	start := time.Now()
	res = rawCall(t, sim, http.MethodGet, "/version", "", "", map[string]string{"Cookie": "PVEAuthCookie=" + sess.Ticket})
	if res.Status != 401 || time.Since(start) < 200*time.Millisecond {
		t.Fatalf("expired ticket must give a delayed 401: %d after %v", res.Status, time.Since(start))
	}
}

// A rejected request is counted under the secret it presented, so a test can
// see a revoked token still being sent; the request log keeps both kinds.
func TestRejectedBySecretAndRequestLog(t *testing.T) {
	sim := startSim(t, pvesim.Options{LogRequests: true})
	const revoked = "revoked-secret-1"
	for _, hdr := range []map[string]string{
		tokenHeader(),
		{"Authorization": "PVEAPIToken=" + testTokenID + "=" + revoked},
		{"Cookie": "PVEAuthCookie=PVE:nobody@pam:00000000::bogus"},
		nil,
	} {
		rawCall(t, sim, http.MethodGet, "/version", "", "", hdr)
	}
	c := sim.Counters()
	want := map[string]int{pvesim.CredentialFingerprint(revoked): 1, "ticket": 1, "none": 1}
	if diff := cmp.Diff(want, c.RejectedBySecret); diff != "" {
		t.Errorf("RejectedBySecret: -want, +got:\n%s", diff)
	}
	log := sim.RequestLog()
	if len(log) != 4 {
		t.Fatalf("request log has %d entries, want 4: %+v", len(log), log)
	}
	if l := log[0]; l.Path != "/version" || l.Rejected || l.Fingerprint != pvesim.CredentialFingerprint(testSecret) {
		t.Errorf("first entry %+v, want an accepted /version with the token's fingerprint", l)
	}
	if l := log[1]; !l.Rejected || l.Fingerprint != pvesim.CredentialFingerprint(revoked) {
		t.Errorf("second entry %+v, want the revoked secret rejected", l)
	}
	sim.ResetCounters()
	if n := len(sim.RequestLog()); n != 0 {
		t.Errorf("request log after ResetCounters has %d entries", n)
	}
}

// An error's status line carries its message as pveproxy sends it, the internal header
// that carries it there never reaches the client, and the connection stays usable.
func TestErrorMessageInStatusLine(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	for range 2 {
		res := rawCall(t, sim, http.MethodGet, "/nodes/pve/qemu/4242/config", "", "", tokenHeader())
		want := "500 Configuration file 'nodes/pve/qemu-server/4242.conf' does not exist"
		if res.StatusLine != want || res.message() != "Configuration file 'nodes/pve/qemu-server/4242.conf' does not exist\n" {
			t.Fatalf("status line %q (want %q), body %s", res.StatusLine, want, res.Text)
		}
		if len(res.Header.Values("X-Pvesim-Reason")) != 0 {
			t.Fatalf("the internal reason header leaked: %v", res.Header)
		}
		if res.Header.Get("Content-Type") != "application/json;charset=UTF-8" {
			t.Fatalf("headers lost in the rewrite: %v", res.Header)
		}
	}
	ok := rawCall(t, sim, http.MethodGet, "/version", "", "", tokenHeader())
	if ok.StatusLine != "200 OK" {
		t.Fatalf("a success after errors: %q", ok.StatusLine)
	}
}
