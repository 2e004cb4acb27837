package pveconformance

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pveclient "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/clients/proxmox/surface"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// tcase is one case's view of its target: requests are recorded so covers
// can check what the case declares.
type tcase struct {
	*Target
	t   *testing.T
	rec *recorder
}

// target gives a case its target: a simulator of its own started with opts,
// or the shared real target (opts then do not apply).
func target(t *testing.T, opts pvesim.Options) *tcase {
	t.Helper()
	base := realTarget
	if base == nil {
		tg, err := NewSimTarget(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tg.Close)
		base = tg
	}
	rec := &recorder{seen: map[string]map[string]bool{}}
	return &tcase{Target: base.Observed(rec.wrap), t: t, rec: rec}
}

func (c *tcase) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	c.t.Cleanup(cancel)
	return ctx
}

func (c *tcase) raw(method, path string, params url.Values) Response {
	c.t.Helper()
	res, err := c.Raw(c.ctx(), method, path, params)
	if err != nil {
		c.t.Fatal(err)
	}
	return res
}

// data GETs path and decodes its data into v, failing on anything but 200.
func (c *tcase) data(path string, params url.Values, v any) {
	c.t.Helper()
	res := c.raw(http.MethodGet, path, params)
	if res.Status != http.StatusOK {
		c.t.Fatalf("GET %s: %s %s", path, res.StatusLine, res.Text)
	}
	if err := res.Data(v); err != nil {
		c.t.Fatal(err)
	}
}

// cleanupCtx is for t.Cleanup functions: t's own contexts are done then.
func cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*time.Minute)
}

// vmid is a fresh VMID of the range.
func (c *tcase) vmid() int {
	c.t.Helper()
	id, err := c.AllocVMID(c.ctx())
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

// requireSim returns the simulator, or skips saying why a real PVE cannot
// stage what the case needs.
func (c *tcase) requireSim(why string) *pvesim.Server {
	c.t.Helper()
	sim, ok := c.Sim()
	if !ok {
		c.t.Skipf("needs the simulator: %s", why)
	}
	return sim
}

// guestPath is /nodes/{node}/{qemu|lxc}/{vmid} on the target's node.
func (c *tcase) guestPath(kind string, vmid int, rest string) string {
	return "/nodes/" + url.PathEscape(c.Node()) + "/" + kind + "/" + itoa(vmid) + rest
}

// task waits for upid on the target's node and returns its exit status.
func (c *tcase) task(upid string) string {
	c.t.Helper()
	if upid == "" {
		c.t.Fatal("no UPID")
	}
	exit, err := c.WaitTask(c.ctx(), c.Node(), upid)
	if err != nil {
		c.t.Fatal(err)
	}
	return exit
}

// taskLog is the task's whole log.
func (c *tcase) taskLog(upid string) []string {
	c.t.Helper()
	var lines []struct {
		N int    `json:"n"`
		T string `json:"t"`
	}
	c.data("/nodes/"+url.PathEscape(c.Node())+"/tasks/"+url.PathEscape(upid)+"/log", Params("start", "0", "limit", "5000"), &lines)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.T
	}
	return out
}

// mustTask sends a task-starting request and fails unless its task ends OK.
func (c *tcase) mustTask(method, path string, params url.Values) string {
	c.t.Helper()
	res := c.raw(method, path, params)
	if res.Status != http.StatusOK {
		c.t.Fatalf("%s %s: %s %s", method, path, res.StatusLine, res.Text)
	}
	upid := res.UPID()
	if exit := c.task(upid); exit != "OK" {
		c.t.Fatalf("%s %s: task ended %q: %v", method, path, exit, c.taskLog(upid))
	}
	return upid
}

// createVM creates a stopped QEMU guest of this run with one small disk and
// removes it when the case ends.
func (c *tcase) createVM(purpose string, extra ...string) int {
	c.t.Helper()
	id := c.vmid()
	p := Params(append([]string{"vmid", itoa(id), "name", c.GuestName(purpose), "pool", c.Pool(),
		"memory", "512", "scsi0", c.Storage() + ":1", "net0", "virtio,bridge=vmbr0"}, extra...)...)
	c.mustTask(http.MethodPost, "/nodes/"+url.PathEscape(c.Node())+"/qemu", p)
	c.t.Cleanup(func() { c.destroy("qemu", id) })
	return id
}

// destroy stops and destroys a guest this run made, if it is still there.
func (c *tcase) destroy(kind string, vmid int) {
	ctx, cancel := cleanupCtx()
	defer cancel()
	guests, err := c.GuestsInRange(ctx)
	if err != nil {
		c.t.Logf("cleanup of %d: %v", vmid, err)
		return
	}
	for _, g := range guests {
		if g.VMID == vmid && g.Type == kind && strings.HasPrefix(g.Name, Prefix) {
			if err := c.destroyGuest(ctx, g); err != nil {
				c.t.Logf("cleanup of %d: %v", vmid, err)
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// recorder notes every request's endpoint (route template) and parameters.
type recorder struct {
	mu   sync.Mutex
	seen map[string]map[string]bool
}

func (r *recorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		params, err := surface.Params(req)
		if err != nil {
			return nil, err
		}
		key := surface.Key(req.Method, pveclient.RouteTemplate(req.URL.EscapedPath()))
		r.mu.Lock()
		if r.seen[key] == nil {
			r.seen[key] = map[string]bool{}
		}
		for _, p := range params {
			r.seen[key][p] = true
		}
		r.mu.Unlock()
		return next.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// covers declares the endpoints and parameters a case checks, one
// "METHOD /route param ..." per argument, string literals only (the
// coverage test reads them from the source). When the case ends without
// failing or skipping, each must have been sent.
func covers(c *tcase, decls ...string) {
	c.t.Helper()
	c.t.Cleanup(func() {
		if c.t.Failed() || c.t.Skipped() {
			return
		}
		c.rec.mu.Lock()
		defer c.rec.mu.Unlock()
		for _, d := range decls {
			key, params := parseDecl(d)
			got, ok := c.rec.seen[key]
			if !ok {
				c.t.Errorf("covers %q: the case never sent %s (sent: %v)", d, key, slices.Sorted(maps.Keys(c.rec.seen)))
				continue
			}
			for _, p := range params {
				if !got[p] {
					c.t.Errorf("covers %q: %s was never sent with %s", d, key, p)
				}
			}
		}
	})
}

// parseDecl splits "METHOD /route p1 p2" into the endpoint key and params.
func parseDecl(d string) (string, []string) {
	f := strings.Fields(d)
	if len(f) < 2 {
		return d, nil
	}
	return surface.Key(f[0], f[1]), f[2:]
}

// in is the case's view for subtest t: helpers then fail t, from t's own
// goroutine, and requests are recorded with the case's.
func (c *tcase) in(t *testing.T) *tcase { return &tcase{Target: c.Target, t: t, rec: c.rec} }
