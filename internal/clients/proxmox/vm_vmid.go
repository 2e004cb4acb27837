package proxmox

import (
	"context"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// DefaultVMIDHold is how long a VMID handed out stays reserved when nobody
// releases it: long enough for a create to show up in PVE's VMID list.
const DefaultVMIDHold = 10 * time.Minute

// maxVMIDProbes bounds the candidates VMIDAllocator asks PVE about per call.
const maxVMIDProbes = 64

// maxVMID is the largest VMID PVE accepts.
const maxVMID = 999999999

// VMIDAllocator hands out VMIDs per connection. PVE's /cluster/nextid
// reserves nothing, so concurrent creates on one connection would all get the
// same answer; the allocator remembers what it handed out (until Release or
// the hold expires) and skips those. It is keyed by connection name, not by
// client, so a credential rotation (a new client) keeps the reservations.
type VMIDAllocator struct {
	mu   sync.Mutex
	hold time.Duration
	now  func() time.Time
	// handed maps connection -> VMID -> reserved until.
	handed map[string]map[int]time.Time
}

// NewVMIDAllocator returns an allocator whose reservations last hold
// (DefaultVMIDHold when hold <= 0).
func NewVMIDAllocator(hold time.Duration) *VMIDAllocator {
	if hold <= 0 {
		hold = DefaultVMIDHold
	}
	return &VMIDAllocator{hold: hold, now: time.Now, handed: map[string]map[int]time.Time{}}
}

// reserved reports whether vmid is held for connection, dropping expired
// holds on the way.
func (a *VMIDAllocator) reserved(connection string, vmid int) bool {
	until, ok := a.handed[connection][vmid]
	if !ok {
		return false
	}
	if a.now().After(until) {
		delete(a.handed[connection], vmid)
		return false
	}
	return true
}

func (a *VMIDAllocator) reserve(connection string, vmid int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reserved(connection, vmid) {
		return false
	}
	if a.handed[connection] == nil {
		a.handed[connection] = map[int]time.Time{}
	}
	a.handed[connection][vmid] = a.now().Add(a.hold)
	return true
}

// Release forgets a VMID handed out for connection: call it once the guest is
// visible in PVE, or when the VMID is abandoned.
func (a *VMIDAllocator) Release(connection string, vmid int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.handed[connection], vmid)
}

// Hold marks vmid as taken for connection without asking PVE (e.g. a VMID
// read back from a resource after a restart).
func (a *VMIDAllocator) Hold(connection string, vmid int) {
	a.reserve(connection, vmid)
}

// VMIDSource is what VMIDAllocator asks PVE (a *Client answers).
type VMIDSource interface {
	NextVMID(ctx context.Context) (int, error)
	VMIDInUse(ctx context.Context, vmid int) (bool, error)
}

// Next returns a VMID that PVE reports free and that this allocator has not
// handed out for connection, and reserves it. It costs one request when
// nobody races, plus one per candidate skipped.
func (a *VMIDAllocator) Next(ctx context.Context, c VMIDSource, connection string) (int, error) {
	start, err := c.NextVMID(ctx)
	if err != nil {
		return 0, err
	}
	probes := 0
	// Skipping a VMID handed out costs nothing; only questions to PVE are
	// bounded.
	for candidate := start; candidate <= maxVMID && probes < maxVMIDProbes; candidate++ {
		if !a.reserve(connection, candidate) {
			continue
		}
		if candidate == start {
			return candidate, nil
		}
		// Past PVE's own answer the id may belong to a guest: ask.
		probes++
		inUse, err := c.VMIDInUse(ctx, candidate)
		if err != nil {
			a.Release(connection, candidate)
			return 0, err
		}
		if !inUse {
			return candidate, nil
		}
		// Keep it reserved: it is taken, and the hold spares the next caller
		// a request.
	}
	return 0, errors.Errorf("no free VMID found after asking about %d candidates from %d", maxVMIDProbes, start)
}
