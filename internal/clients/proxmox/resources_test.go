package proxmox

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestResourceDecodingIsTolerant(t *testing.T) {
	body := `[
	 {"id":"qemu/100","type":"qemu","vmid":100,"node":"pve","name":"web","status":"running","template":0,"tags":"a;b,c","pool":"prod","maxmem":2147483648},
	 {"id":"qemu/9000","type":"qemu","vmid":"9000","node":"pve","status":"stopped","template":1,"lock":"clone"},
	 {"id":"lxc/101","type":"lxc","vmid":101.0,"node":"pve2","name":123,"template":true,"status":"unknown"},
	 {"id":"qemu/102","type":"qemu","vmid":102,"template":"1","tags":null,"name":{"odd":1}},
	 {"id":"qemu/103","type":"qemu","vmid":103}
	]`
	var rs []Resource
	if err := json.Unmarshal([]byte(body), &rs); err != nil {
		t.Fatalf("decode: %v", err)
	}
	want := []Resource{
		{ID: "qemu/100", Type: "qemu", VMID: 100, Node: "pve", Name: "web", Status: "running", Tags: "a;b,c", Pool: "prod"},
		{ID: "qemu/9000", Type: "qemu", VMID: 9000, Node: "pve", Status: "stopped", Template: true, Lock: "clone"},
		{ID: "lxc/101", Type: "lxc", VMID: 101, Node: "pve2", Name: "123", Template: true, Status: "unknown"},
		{ID: "qemu/102", Type: "qemu", VMID: 102, Template: true},
		{ID: "qemu/103", Type: "qemu", VMID: 103},
	}
	if len(rs) != len(want) {
		t.Fatalf("decoded %d rows, want %d", len(rs), len(want))
	}
	for i := range want {
		if rs[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, rs[i], want[i])
		}
	}
	if got := rs[0].TagList(); len(got) != 3 || got[2] != "c" {
		t.Errorf("TagList = %q", got)
	}
	var bad Resource
	if err := json.Unmarshal([]byte(`{"vmid":"1.5"}`), &bad); err == nil {
		t.Error("a fractional vmid was accepted")
	}
}

// resourcesHandler serves /cluster/resources slowly, failing while fail is set.
type resourcesHandler struct {
	calls atomic.Int32
	fail  atomic.Bool
	delay time.Duration
}

func (h *resourcesHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.calls.Add(1)
	time.Sleep(h.delay)
	if h.fail.Load() {
		writeJSON(w, http.StatusInternalServerError, `{"data":null,"message":"boom\n"}`)
		return
	}
	writeJSON(w, http.StatusOK, `{"data":[{"id":"qemu/100","type":"qemu","vmid":100,"node":"pve"}]}`)
}

func TestCachedClusterResourcesErrorsAreNotCached(t *testing.T) {
	h := &resourcesHandler{}
	h.fail.Store(true)
	srv, ca := tlsServer(t, h)
	c := tokenClient(t, srv, ca, nil)
	if _, err := c.CachedClusterResources(t.Context(), time.Minute); err == nil {
		t.Fatal("a 500 gave no error")
	}
	h.fail.Store(false)
	rs, err := c.CachedClusterResources(t.Context(), time.Minute)
	if err != nil || len(rs) != 1 || rs[0].VMID != 100 {
		t.Fatalf("after recovery: %+v, %v", rs, err)
	}
	if got := h.calls.Load(); got != 2 {
		t.Fatalf("%d requests, want 2 (the failure must not be cached)", got)
	}
}

func TestCachedClusterResourcesCallerCancel(t *testing.T) {
	h := &resourcesHandler{delay: 200 * time.Millisecond}
	srv, ca := tlsServer(t, h)
	c := tokenClient(t, srv, ca, nil)

	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() {
		_, err := c.CachedClusterResources(ctx, time.Minute)
		first <- err
	}()
	for h.calls.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	var wg sync.WaitGroup
	var others atomic.Int32
	for range 5 {
		wg.Go(func() {
			if rs, err := c.CachedClusterResources(t.Context(), time.Minute); err == nil && len(rs) == 1 {
				others.Add(1)
			}
		})
	}
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v, want context.Canceled", err)
	}
	wg.Wait()
	if others.Load() != 5 || h.calls.Load() != 1 {
		t.Fatalf("%d of 5 waiting callers got the rows from %d requests; want 5 from 1", others.Load(), h.calls.Load())
	}
}
