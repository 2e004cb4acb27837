package proxmox

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// tlsServer starts an HTTPS test server and returns it with its CA as PEM.
func tlsServer(t *testing.T, h http.Handler) (*httptest.Server, []byte) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return srv, ca
}

// tokenClient builds a token-authenticated client for srv.
func tokenClient(t *testing.T, srv *httptest.Server, ca []byte, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{Endpoint: srv.URL, TokenID: "root@pam!test", Secret: "s3cret-token", CAPEM: ca}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Retire)
	return c
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// fastRetries shortens the backoff so retry tests stay quick.
func (c *Client) fastRetries() {
	c.retry.policy.backoff = time.Millisecond
}
