package pvesim

import (
	"math/rand/v2"
	"sync"
)

// dice is the simulator's one source of randomness (which requests and tasks a fault
// rule hits, how long a ranged task runs). It is seeded, so a run that failed under
// injected faults can be replayed with the same draws: the seed is an Option, a field of
// PUT /_sim/faults, and cmd/pvesim's --seed. Each use draws from its own stream, so
// adding a fault rule does not shift the task durations.
type dice struct {
	mu        sync.Mutex
	seed      uint64
	faults    *rand.Rand
	durations *rand.Rand
}

// Streams of one seed: PCG's second word selects an independent sequence.
const (
	faultStream    = 1
	durationStream = 2
)

// newDice seeds the dice; seed 0 picks a seed, which Seed reports.
func newDice(seed uint64) *dice {
	d := &dice{}
	d.reseed(seed)
	return d
}

func (d *dice) reseed(seed uint64) {
	for seed == 0 {
		seed = rand.Uint64() //nolint:gosec // picks a seed that is then reported, not a secret
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seed = seed
	d.faults = rand.New(rand.NewPCG(seed, faultStream))       //nolint:gosec // replayable fault dice, not a secret
	d.durations = rand.New(rand.NewPCG(seed, durationStream)) //nolint:gosec // replayable run times, not a secret
}

func (d *dice) currentSeed() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seed
}

// hit reports whether a fault with probability rate in [0,1] strikes.
func (d *dice) hit(rate float64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.faults.Float64() < rate
}

// duration draws a run time in [0, span).
func (d *dice) duration(span int64) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.durations.Int64N(span)
}

// Seed is the seed of the simulator's randomness now in use: pass it as Options.Seed (or
// "seed" in PUT /_sim/faults, or --seed) to replay the same fault and run-time draws.
func (s *Server) Seed() uint64 { return s.dice.currentSeed() }

// Reseed restarts the simulator's randomness from seed (0 picks one, reported by Seed).
func (s *Server) Reseed(seed uint64) { s.dice.reseed(seed) }
