package proxmox

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// TestNothingPrinted: go-proxmox prints request bodies at debug level and
// errors at its default level; the client must print nothing at all, so no
// password (login, cloud-init, container) can reach the provider's output.
// Not parallel: it swaps os.Stdout and os.Stderr.
func TestNothingPrinted(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	srv.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{Method: http.MethodPost, PathPattern: "/nodes/*/qemu", ErrorRate: 1, Status: 500, Message: "injected"}}})
	good, _ := simClient(t, srv, nil)
	bad, _ := simClient(t, srv, func(c *Config) { c.Password = "wrong-Password-9" })

	out := captureOutput(t, func() {
		_, _ = good.Verify(t.Context())
		_, _ = bad.Verify(t.Context())
		_ = good.API().Post(t.Context(), "/nodes/pve/qemu", map[string]string{"vmid": "100", "cipassword": "ci-Secret-7"}, nil)
		_, _ = good.API().Node(t.Context(), "pve")
	})
	if out != "" {
		t.Fatalf("the client printed %q", out)
	}
	for _, s := range []string{simPassword, "wrong-Password-9", "ci-Secret-7"} {
		if strings.Contains(out, s) {
			t.Fatalf("output contains a secret")
		}
	}
}

func captureOutput(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	func() {
		defer func() { os.Stdout, os.Stderr = stdout, stderr }()
		fn()
	}()
	_ = w.Close()
	return <-done
}
