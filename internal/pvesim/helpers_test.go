package pvesim_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pveraw"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	testUser     = "root@pam"
	testPassword = "correct horse"
	testTokenID  = "root@pam!kubemox"
	testSecret   = "5f1a1c5e-0000-4000-8000-000000000001"
)

// startSim starts a simulator with a password user and a token, closed at test end.
func startSim(t *testing.T, opts pvesim.Options) *pvesim.Server {
	t.Helper()
	sim, err := pvesim.Start(opts)
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	t.Cleanup(sim.Close)
	sim.AddUser(testUser, testPassword)
	sim.AddToken(testTokenID, testSecret)
	return sim
}

// httpClientFor trusts only the simulator's CA.
func httpClientFor(t *testing.T, sim *pvesim.Server) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(sim.CAPEM()) {
		t.Fatal("CA PEM not parseable")
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64, TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

func passwordClient(t *testing.T, sim *pvesim.Server) *proxmox.Client {
	t.Helper()
	return proxmox.NewClient(sim.APIURL(), proxmox.WithHTTPClient(httpClientFor(t, sim)),
		proxmox.WithCredentials(&proxmox.Credentials{Username: testUser, Password: testPassword}))
}

func tokenClient(t *testing.T, sim *pvesim.Server) *proxmox.Client {
	t.Helper()
	return proxmox.NewClient(sim.APIURL(), proxmox.WithHTTPClient(httpClientFor(t, sim)), proxmox.WithAPIToken(testTokenID, testSecret))
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rawResponse is a decoded PVE answer with its status (pveraw's, which the
// conformance suite uses too).
type rawResponse struct{ pveraw.Response }

func (r rawResponse) message() string { return r.Message() }

func (r rawResponse) errors() map[string]string { return r.Errors() }

// rawCall sends one request with the headers given (tokenHeader, none, or a
// ticket cookie and CSRF token) and body (none when empty) of contentType.
func rawCall(t *testing.T, sim *pvesim.Server, method, path, contentType, body string, hdr map[string]string) rawResponse {
	t.Helper()
	res, err := pveraw.Send(testCtx(t), httpClientFor(t, sim), method, sim.APIURL()+path, contentType, body, hdr)
	if err != nil {
		t.Fatal(err)
	}
	return rawResponse{res}
}

func tokenHeader() map[string]string {
	return map[string]string{"Authorization": "PVEAPIToken=" + testTokenID + "=" + testSecret}
}

func form(kv ...string) string { return pveraw.Params(kv...).Encode() }

func jsonBody(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// waitTask waits for a UPID through go-proxmox and returns its error.
func waitTask(t *testing.T, _ *proxmox.Client, task *proxmox.Task) error {
	t.Helper()
	if task == nil {
		t.Fatal("nil task")
	}
	return task.Wait(testCtx(t), 20*time.Millisecond, 30*time.Second)
}

// eventually polls cond until it holds or the generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

var errNilTask = errors.New("nil task")

// nodeRef is a handle on node "pve" without a request.
func nodeRef(c *proxmox.Client) *proxmox.Node { return c.NodeRef("pve") }

func asAPIError(err error, target **proxmox.APIError) bool { return errors.As(err, target) }

// getData GETs a path with the token and returns the raw "data" value decoded generically.
func getData(t *testing.T, sim *pvesim.Server, path string) any {
	t.Helper()
	res := rawCall(t, sim, http.MethodGet, path, "", "", tokenHeader())
	if res.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, res.Status, res.Text)
	}
	var v any
	if err := json.Unmarshal(res.Body["data"], &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func getMap(t *testing.T, sim *pvesim.Server, path string) map[string]any {
	t.Helper()
	m, ok := getData(t, sim, path).(map[string]any)
	if !ok {
		t.Fatalf("GET %s: not an object", path)
	}
	return m
}

func apiErr(t *testing.T, err error) *proxmox.APIError {
	t.Helper()
	var ae *proxmox.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want *APIError, got %v", err)
	}
	return ae
}

func wantTaskFailure(t *testing.T, c *proxmox.Client, task *proxmox.Task, wantMsg string) {
	t.Helper()
	err := waitTask(t, c, task)
	if !proxmox.IsTaskFailed(err) {
		t.Fatalf("want failed task %q, got %v", wantMsg, err)
	}
	var tfe *proxmox.TaskFailedError
	errors.As(err, &tfe)
	if tfe.ExitStatus != wantMsg {
		t.Fatalf("exit status %q, want %q", tfe.ExitStatus, wantMsg)
	}
	log, err := task.Log(testCtx(t), 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	if last := log[len(log)-1]; last != "TASK ERROR: "+wantMsg {
		t.Fatalf("last log line %q, want the exit status after \"TASK ERROR: \"", last)
	}
}

// mustWait fails t unless the request was accepted and its task ended OK.
func mustWait(t *testing.T, c *proxmox.Client, what string, task *proxmox.Task, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := waitTask(t, c, task); err != nil {
		t.Fatalf("%s task: %v", what, err)
	}
}

func volids(list []*proxmox.StorageContent) []string {
	out := make([]string, 0, len(list))
	for _, c := range list {
		out = append(out, c.Volid)
	}
	return out
}

func hasVolume(list []*proxmox.StorageContent, volid string) bool {
	for _, v := range volids(list) {
		if v == volid {
			return true
		}
	}
	return false
}
