package pvesim_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

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

// rawResponse is a decoded PVE answer with its status.
type rawResponse struct {
	Status int
	// StatusLine is the code and reason phrase ("500 VM is locked (clone)").
	StatusLine string
	Header     http.Header
	Body       map[string]json.RawMessage
	Text       string
}

func (r rawResponse) message() string {
	var m string
	_ = json.Unmarshal(r.Body["message"], &m)
	return m
}

func (r rawResponse) errors() map[string]string {
	m := map[string]string{}
	_ = json.Unmarshal(r.Body["errors"], &m)
	return m
}

// rawCall sends one request with a token (auth "token"), no credentials (""), or a
// ticket+CSRF pair (auth "ticket", using the values given).
func rawCall(t *testing.T, sim *pvesim.Server, method, path, contentType, body string, hdr map[string]string) rawResponse {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(testCtx(t), method, sim.APIURL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := httpClientFor(t, sim).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	out := rawResponse{Status: res.StatusCode, StatusLine: res.Status, Header: res.Header, Text: string(b), Body: map[string]json.RawMessage{}}
	_ = json.Unmarshal(b, &out.Body)
	return out
}

func tokenHeader() map[string]string {
	return map[string]string{"Authorization": "PVEAPIToken=" + testTokenID + "=" + testSecret}
}

func form(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v.Encode()
}

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
