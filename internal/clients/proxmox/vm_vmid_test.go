package proxmox

import (
	"context"
	"sync"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func vmSimClient(t *testing.T) (*pvesim.Server, *Client) {
	t.Helper()
	sim, err := pvesim.Start(pvesim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	sim.AddToken("root@pam!t", "s")
	c, err := New(Config{Endpoint: sim.URL(), TokenID: "root@pam!t", Secret: "s", CAPEM: sim.CAPEM()})
	if err != nil {
		t.Fatal(err)
	}
	return sim, c
}

// Concurrent callers on one connection never get the same VMID, even though
// PVE's nextid gives them all the same answer; more VMIDs are handed out
// than the probe bound, since skipping our own costs no request.
func TestVMIDAllocatorHandsOutDistinctIDs(t *testing.T) {
	sim, c := vmSimClient(t)
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", VMID: 103, Config: map[string]string{"name": "taken"}}); err != nil {
		t.Fatal(err)
	}
	a := NewVMIDAllocator(0)
	const n = 100
	ids := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := a.Next(context.Background(), c, "conn")
			if err != nil {
				t.Error(err)
				return
			}
			ids <- id
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int]bool{}
	for id := range ids {
		if seen[id] || id == 103 {
			t.Errorf("VMID %d handed out twice or taken", id)
		}
		seen[id] = true
	}
	if len(seen) != n {
		t.Errorf("got %d VMIDs, want %d", len(seen), n)
	}
	// Another connection has its own reservations.
	if id, err := a.Next(context.Background(), c, "other"); err != nil || id != 100 {
		t.Errorf("other connection got %d, %v; want 100", id, err)
	}
}

// VMIDInUse asks PVE's cluster-wide VMID list, which (unlike the resource
// listing) never lags.
func TestVMIDInUse(t *testing.T) {
	sim, c := vmSimClient(t)
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", VMID: 150, Config: map[string]string{"hostname": "ct"}}); err != nil {
		t.Fatal(err)
	}
	for vmid, want := range map[int]bool{150: true, 151: false} {
		got, err := c.VMIDInUse(context.Background(), vmid)
		if err != nil || got != want {
			t.Errorf("VMIDInUse(%d) = %v, %v; want %v", vmid, got, err, want)
		}
	}
}
