package pvesim

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"
)

// Hold states, as Server.Holds and GET /_sim/holds report them.
const (
	// HoldArmed waits for a matching request (or has caught one that is still being applied).
	HoldArmed = "armed"
	// HoldHeld has applied its request and keeps the response back.
	HoldHeld = "held"
	// HoldReleased has sent its response, or was released before catching a request.
	HoldReleased = "released"
)

// maxReleasedHolds bounds how many released holds stay listed, so a long-running
// simulator whose tests arm holds in a loop does not grow without bound.
const maxReleasedHolds = 100

// Hold is a one-shot fault: the next request matching its method and pattern is applied,
// then its response waits until Release, a reset or Close.
type Hold struct {
	id      int
	method  string
	pattern string
	re      *regexp.Regexp
	set     *holdSet

	held     chan struct{}
	release  chan struct{}
	heldOnce sync.Once
	relOnce  sync.Once

	// Guarded by set.mu.
	state     string
	path      string
	heldSince time.Time
}

// HoldView is a hold as GET /_sim/holds lists it.
type HoldView struct {
	ID          int    `json:"id"`
	Method      string `json:"method,omitempty"`
	PathPattern string `json:"pathPattern,omitempty"`
	// Path is the request path the hold caught, once it caught one.
	Path      string    `json:"path,omitempty"`
	State     string    `json:"state"`
	HeldSince time.Time `json:"heldSince,omitzero"`
}

// ID identifies the hold in GET /_sim/holds and POST /_sim/holds/{id}/release.
func (h *Hold) ID() int { return h.id }

// Held is closed once a request has been applied and its response is being held.
func (h *Hold) Held() <-chan struct{} { return h.held }

// Release sends the held response. A hold released before it caught a request is
// disarmed: no request will match it.
func (h *Hold) Release() { h.set.release(h) }

// park keeps the response back until the hold is released or the server stops.
func (h *Hold) park(stop <-chan struct{}) {
	h.set.markHeld(h)
	h.heldOnce.Do(func() { close(h.held) })
	select {
	case <-h.release:
	case <-stop:
	}
	h.set.release(h)
}

// holdSet keeps the holds of one server: the armed ones in arming order (the first
// match wins) and every hold not yet forgotten, for listing and long polls.
type holdSet struct {
	mu     sync.Mutex
	nextID int
	armed  []*Hold
	listed []*Hold
	// changed is closed and replaced on every state change, waking long polls.
	changed chan struct{}
}

// notifyLocked wakes every waiter; the caller holds hs.mu.
func (hs *holdSet) notifyLocked() {
	if hs.changed != nil {
		close(hs.changed)
	}
	hs.changed = make(chan struct{})
}

// changedLocked is the channel the next state change closes; the caller holds hs.mu.
func (hs *holdSet) changedLocked() <-chan struct{} {
	if hs.changed == nil {
		hs.changed = make(chan struct{})
	}
	return hs.changed
}

func (hs *holdSet) add(method, pattern string) *Hold {
	pattern, re := compilePattern(pattern)
	h := &Hold{method: method, pattern: pattern, re: re, set: hs, state: HoldArmed,
		held: make(chan struct{}), release: make(chan struct{})}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.nextID++
	h.id = hs.nextID
	hs.armed = append(hs.armed, h)
	hs.listed = append(hs.listed, h)
	hs.notifyLocked()
	return h
}

// take disarms and returns the first armed hold matching the request, or nil.
func (hs *holdSet) take(method, reqPath string) *Hold {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for i, h := range hs.armed {
		if patternMatches(h.method, h.pattern, h.re, method, reqPath) {
			hs.armed = slices.Delete(hs.armed, i, i+1)
			h.path = reqPath
			hs.notifyLocked()
			return h
		}
	}
	return nil
}

func (hs *holdSet) markHeld(h *Hold) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if h.state == HoldArmed {
		h.state, h.heldSince = HoldHeld, time.Now()
		hs.notifyLocked()
	}
}

func (hs *holdSet) release(h *Hold) {
	hs.mu.Lock()
	hs.releaseLocked(h)
	hs.trimReleasedLocked()
	hs.mu.Unlock()
	h.relOnce.Do(func() { close(h.release) })
}

// releaseLocked marks h released and disarms it; the caller holds hs.mu and closes
// h.release after unlocking.
func (hs *holdSet) releaseLocked(h *Hold) {
	if h.state == HoldReleased {
		return
	}
	h.state = HoldReleased
	if i := slices.Index(hs.armed, h); i >= 0 {
		hs.armed = slices.Delete(hs.armed, i, i+1)
	}
	hs.notifyLocked()
}

// trimReleasedLocked forgets the oldest released holds beyond maxReleasedHolds.
func (hs *holdSet) trimReleasedLocked() {
	released := 0
	for _, h := range hs.listed {
		if h.state == HoldReleased {
			released++
		}
	}
	hs.listed = slices.DeleteFunc(hs.listed, func(h *Hold) bool {
		if released > maxReleasedHolds && h.state == HoldReleased {
			released--
			return true
		}
		return false
	})
}

// releaseAll releases every hold, armed ones included, and returns how they end up.
func (hs *holdSet) releaseAll() []HoldView { return hs.releaseEvery(false) }

// forgetAll releases every hold and drops them from the listing (reset and Close).
func (hs *holdSet) forgetAll() { hs.releaseEvery(true) }

func (hs *holdSet) releaseEvery(forget bool) []HoldView {
	hs.mu.Lock()
	all := slices.Clone(hs.listed)
	for _, h := range all {
		hs.releaseLocked(h)
	}
	views := hs.viewsLocked(0)
	if forget {
		hs.listed = nil
	}
	hs.trimReleasedLocked()
	hs.mu.Unlock()
	for _, h := range all {
		h.relOnce.Do(func() { close(h.release) })
	}
	return views
}

func (hs *holdSet) releaseByID(id int) (HoldView, error) {
	hs.mu.Lock()
	i := slices.IndexFunc(hs.listed, func(h *Hold) bool { return h.id == id })
	if i < 0 {
		hs.mu.Unlock()
		return HoldView{}, errf(http.StatusNotFound, "no hold %d", id)
	}
	h := hs.listed[i]
	hs.mu.Unlock()
	h.Release()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return h.viewLocked(), nil
}

func (h *Hold) viewLocked() HoldView {
	return HoldView{ID: h.id, Method: h.method, PathPattern: h.pattern, Path: h.path, State: h.state, HeldSince: h.heldSince}
}

// viewsLocked lists the holds, only the one with that id unless id is 0.
func (hs *holdSet) viewsLocked(id int) []HoldView {
	views := []HoldView{}
	for _, h := range hs.listed {
		if id == 0 || h.id == id {
			views = append(views, h.viewLocked())
		}
	}
	return views
}

func (hs *holdSet) view(h *Hold) HoldView {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return h.viewLocked()
}

func (hs *holdSet) views(id int) []HoldView {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.viewsLocked(id)
}

// holdWait is a long poll: until a listed hold (the one with id, unless id is 0) is
// in state, at most timeout.
type holdWait struct {
	id      int
	state   string
	timeout time.Duration
}

// waitFor blocks until the wait is satisfied and returns the listing then. It gives up
// with 504 after the timeout, 404 when the hold it waits for is forgotten (a reset), and
// 503 when the client goes away or the server stops.
func (hs *holdSet) waitFor(ctx context.Context, stop <-chan struct{}, w holdWait) ([]HoldView, error) {
	timer := time.NewTimer(w.timeout)
	defer timer.Stop()
	for {
		hs.mu.Lock()
		views := hs.viewsLocked(w.id)
		changed := hs.changedLocked()
		hs.mu.Unlock()
		if w.id != 0 && len(views) == 0 {
			return nil, errf(http.StatusNotFound, "no hold %d", w.id)
		}
		if slices.ContainsFunc(views, func(v HoldView) bool { return v.State == w.state }) {
			return views, nil
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil, errf(http.StatusGatewayTimeout, "no hold %s within %s", w.state, w.timeout)
		case <-ctx.Done():
			return nil, errf(http.StatusServiceUnavailable, "client gone")
		case <-stop:
			return nil, errf(http.StatusServiceUnavailable, "server closed")
		}
	}
}

// HoldResponse arms a one-shot hold: the next request matching method and pathPattern
// (FaultRule syntax) is applied, then its response waits for Hold.Release.
func (s *Server) HoldResponse(method, pathPattern string) *Hold {
	return s.faults.holds.add(method, pathPattern)
}

// Holds lists the armed, held and recently released holds in arming order.
func (s *Server) Holds() []HoldView { return s.faults.holds.views(0) }

// ReleaseHolds releases every hold; armed ones are disarmed.
func (s *Server) ReleaseHolds() { s.faults.holds.releaseAll() }
