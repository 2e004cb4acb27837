package proxmox

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/metrics"
)

func testClient(t *testing.T) *Client {
	t.Helper()
	c, err := New(Config{Endpoint: "pve.invalid", TokenID: "root@pam!t", Secret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCacheStoreReplaceRemove(t *testing.T) {
	cache := NewCache()
	a, b := testClient(t), testClient(t)
	cache.Store("c1", "fp1", a)
	cache.Store("c1", "fp1", a) // the same client again: not retired
	if a.Retired() {
		t.Fatal("re-storing the current client retired it")
	}
	cache.Store("c1", "fp2", b)
	if !a.Retired() || b.Retired() {
		t.Fatalf("after replacement: old retired=%v, new retired=%v", a.Retired(), b.Retired())
	}
	if got, _ := cache.Get("c1"); got != b {
		t.Fatal("Get does not return the replacement")
	}
	cache.Remove("c1")
	cache.Remove("c1") // idempotent
	if !b.Retired() {
		t.Fatal("Remove did not retire the client")
	}
	if _, err := cache.Get("c1"); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Get after Remove: %v", err)
	}
	if cache.Fingerprint("c1") != "" {
		t.Fatal("Fingerprint of a removed connection")
	}
}

// TestCacheNotifyNeverBlocks: a subscriber that stops reading must not stall
// the connection reconciler.
func TestCacheNotifyNeverBlocks(t *testing.T) {
	cache := NewCache()
	stalled := cache.Subscribe()
	cl := testClient(t)
	for i := range subscriberBuffer + 10 {
		cache.Store("c", fmt.Sprint(i), cl)
	}
	if got := len(stalled); got != subscriberBuffer {
		t.Fatalf("buffered %d events, want %d", got, subscriberBuffer)
	}
}

func TestCacheConcurrentUse(t *testing.T) {
	cache := NewCache()
	events := cache.Subscribe()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprint("c", i%2)
			for j := range 20 {
				cache.Store(name, fmt.Sprint(j), testClient(t))
				if _, err := cache.Get(name); err != nil {
					t.Errorf("Get: %v", err)
				}
				_ = cache.Fingerprint(name)
			}
		})
	}
	wg.Wait()
	if len(events) == 0 {
		t.Fatal("no events")
	}
}

// TestCacheCountsRebuilds: only replacing a client built from another
// fingerprint is a rebuild; a first client, or one after a Remove (the
// connection failed verification), is not.
func TestCacheCountsRebuilds(t *testing.T) {
	m, reg := newTestMetrics(t)
	cache := NewCache(WithMetrics(m))
	cache.Store("c1", "fp1", testClient(t))
	cache.Store("c1", "fp1", testClient(t)) // same fingerprint
	cache.Store("c1", "fp2", testClient(t)) // rotated
	cache.Store("c2", "fp1", testClient(t))
	cache.Remove("c2")
	cache.Store("c2", "fp2", testClient(t))

	s := gatherSamples(t, reg)
	for conn, want := range map[string]float64{"c1": 1, "c2": 0} {
		if got, _ := s.Sum(metrics.ClientRebuildsTotal, map[string]string{"connection": conn}); got != want {
			t.Errorf("rebuilds of %s = %v, want %v", conn, got, want)
		}
	}
	if cache.Metrics() != m {
		t.Error("the cache does not hand out its metrics")
	}
}
