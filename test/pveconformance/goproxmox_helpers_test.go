package pveconformance

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"
)

// The cases written on go-proxmox (moved from internal/pvesim) check what
// the provider's client library makes of PVE's answers; these helpers give
// them the case's client, requests recorded like raw ones.

// goClient is go-proxmox on the target: the token, else the password.
func (c *tcase) goClient() *proxmox.Client {
	c.t.Helper()
	cl, err := c.Client()
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// goNode is the target's node, without a request.
func (c *tcase) goNode() *proxmox.Node { return c.goClient().NodeRef(c.Node()) }

// goWait waits for a go-proxmox task and returns its error.
func (c *tcase) goWait(task *proxmox.Task) error {
	c.t.Helper()
	if task == nil {
		c.t.Fatal("no task")
	}
	return task.Wait(c.ctx(), 50*time.Millisecond, 2*time.Minute)
}

// goMust fails the case unless the request was accepted and its task ended OK.
func (c *tcase) goMust(what string, task *proxmox.Task, err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatalf("%s: %v", what, err)
	}
	if err := c.goWait(task); err != nil {
		c.t.Fatalf("%s task: %v", what, err)
	}
}

// goTaskFailure waits for task and returns its exit status, failing the
// case unless the task failed.
func (c *tcase) goTaskFailure(task *proxmox.Task) string {
	c.t.Helper()
	err := c.goWait(task)
	var tfe *proxmox.TaskFailedError
	if !errors.As(err, &tfe) {
		c.t.Fatalf("want a failed task, got %v", err)
	}
	return tfe.ExitStatus
}

// apiErr is err as go-proxmox's APIError, failing the case otherwise.
func (c *tcase) apiErr(err error) *proxmox.APIError {
	c.t.Helper()
	var ae *proxmox.APIError
	if !errors.As(err, &ae) {
		c.t.Fatalf("want *APIError, got %v", err)
	}
	return ae
}

// config reads a guest's config (params: current=1 and the like).
func (c *tcase) config(kind string, vmid int, params url.Values) map[string]any {
	c.t.Helper()
	var cfg map[string]any
	c.data(c.guestPath(kind, vmid, "/config"), params, &cfg)
	return cfg
}

// unprotect removes a guest's protection so the cleanup may destroy it;
// register it after the guest's creation (cleanups run last first).
func (c *tcase) unprotect(kind string, vmid int) {
	c.t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		_, _ = c.Raw(ctx, http.MethodPut, c.guestPath(kind, vmid, "/config"), Params("delete", "protection"))
	})
}
