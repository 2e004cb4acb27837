package pvesim

import (
	"sync"
	"time"
)

// Counters are request counts since start or the last ResetCounters.
type Counters struct {
	// ByEndpoint is keyed by method and path template, e.g. "GET /nodes/{node}/qemu/{vmid}/config".
	ByEndpoint map[string]int `json:"byEndpoint"`
	// ByCredential counts authenticated requests by "user@realm" (tickets) or "user@realm!id" (tokens).
	ByCredential map[string]int `json:"byCredential"`
	// ByCredentialSecret counts authenticated requests by secret fingerprint, hex of
	// sha256(secret)[:8]: the token secret, or the password a ticket was obtained with.
	ByCredentialSecret map[string]int `json:"byCredentialSecret"`
	// RejectedBySecret counts requests answered 401 by the fingerprint of the token secret
	// they presented ("ticket" for a rejected ticket, "none" without credentials), so a
	// test can tell that a revoked secret is still being sent.
	RejectedBySecret map[string]int `json:"rejectedBySecret"`
}

// LoggedRequest is one request in the log Options.LogRequests keeps.
type LoggedRequest struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	// Path is the request's path below /api2/json, e.g. /nodes/pve/qemu/100/pending.
	Path string `json:"path"`
	// Fingerprint is the credential's secret fingerprint (as in ByCredentialSecret), or
	// for a rejected request what RejectedBySecret counts it under.
	Fingerprint string `json:"fingerprint"`
	Rejected    bool   `json:"rejected,omitempty"`
}

type counterSet struct {
	mu  sync.Mutex
	c   Counters
	log *[]LoggedRequest // nil unless Options.LogRequests
}

func newCounterSet(logRequests bool) *counterSet {
	cs := &counterSet{}
	if logRequests {
		cs.log = &[]LoggedRequest{}
	}
	cs.reset()
	return cs
}

func (cs *counterSet) reset() {
	cs.mu.Lock()
	cs.c = Counters{ByEndpoint: map[string]int{}, ByCredential: map[string]int{}, ByCredentialSecret: map[string]int{}, RejectedBySecret: map[string]int{}}
	if cs.log != nil {
		*cs.log = nil
	}
	cs.mu.Unlock()
}

func (cs *counterSet) count(endpoint string, cred credential, method, path string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.log != nil {
		*cs.log = append(*cs.log, LoggedRequest{Time: time.Now(), Method: method, Path: path, Fingerprint: cred.Fingerprint})
	}
	cs.c.ByEndpoint[endpoint]++
	if name := cred.name(); name != "" {
		cs.c.ByCredential[name]++
	}
	if cred.Fingerprint != "" {
		cs.c.ByCredentialSecret[cred.Fingerprint]++
	}
}

// reject counts a request answered 401 under the secret it presented.
func (cs *counterSet) reject(presented, method, path string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.log != nil {
		*cs.log = append(*cs.log, LoggedRequest{Time: time.Now(), Method: method, Path: path, Fingerprint: presented, Rejected: true})
	}
	cs.c.RejectedBySecret[presented]++
}

func (cs *counterSet) snapshot() Counters {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return Counters{
		ByEndpoint:         copyCounts(cs.c.ByEndpoint),
		ByCredential:       copyCounts(cs.c.ByCredential),
		ByCredentialSecret: copyCounts(cs.c.ByCredentialSecret),
		RejectedBySecret:   copyCounts(cs.c.RejectedBySecret),
	}
}

// RequestLog returns the requests logged since start or the last ResetCounters
// (Options.LogRequests; nil without it).
func (s *Server) RequestLog() []LoggedRequest {
	s.counters.mu.Lock()
	defer s.counters.mu.Unlock()
	if s.counters.log == nil {
		return nil
	}
	return append([]LoggedRequest(nil), *s.counters.log...)
}

func copyCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Counters returns a copy of the request counters.
func (s *Server) Counters() Counters { return s.counters.snapshot() }

// ResetCounters zeroes the request counters.
func (s *Server) ResetCounters() { s.counters.reset() }

// CredentialFingerprint is the key ByCredentialSecret uses for a secret or password.
func CredentialFingerprint(secret string) string { return fingerprint(secret) }
