package pvesim

import "sync"

// Counters are request counts since start or the last ResetCounters.
type Counters struct {
	// ByEndpoint is keyed by method and path template, e.g. "GET /nodes/{node}/qemu/{vmid}/config".
	ByEndpoint map[string]int `json:"byEndpoint"`
	// ByCredential counts authenticated requests by "user@realm" (tickets) or "user@realm!id" (tokens).
	ByCredential map[string]int `json:"byCredential"`
	// ByCredentialSecret counts authenticated requests by secret fingerprint, hex of
	// sha256(secret)[:8]: the token secret, or the password a ticket was obtained with.
	ByCredentialSecret map[string]int `json:"byCredentialSecret"`
}

type counterSet struct {
	mu sync.Mutex
	c  Counters
}

func newCounterSet() *counterSet {
	cs := &counterSet{}
	cs.reset()
	return cs
}

func (cs *counterSet) reset() {
	cs.mu.Lock()
	cs.c = Counters{ByEndpoint: map[string]int{}, ByCredential: map[string]int{}, ByCredentialSecret: map[string]int{}}
	cs.mu.Unlock()
}

func (cs *counterSet) count(endpoint string, cred credential) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.c.ByEndpoint[endpoint]++
	if name := cred.name(); name != "" {
		cs.c.ByCredential[name]++
	}
	if cred.Fingerprint != "" {
		cs.c.ByCredentialSecret[cred.Fingerprint]++
	}
}

func (cs *counterSet) snapshot() Counters {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return Counters{
		ByEndpoint:         copyCounts(cs.c.ByEndpoint),
		ByCredential:       copyCounts(cs.c.ByCredential),
		ByCredentialSecret: copyCounts(cs.c.ByCredentialSecret),
	}
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
