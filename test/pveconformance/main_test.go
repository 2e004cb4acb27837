package pveconformance

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// realTarget is the cluster the environment names, shared by every case of
// the run; nil when the cases run on simulators of their own.
var realTarget *Target

// TestMain picks the target: without PVE_ENDPOINT each case starts its own
// simulator; with it, the range guard runs first and everything the run
// made is removed at the end, whatever the cases did.
func TestMain(m *testing.M) {
	cfg, isReal, err := ConfigFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pveconformance:", err)
		os.Exit(2)
	}
	if !isReal {
		os.Exit(m.Run())
	}
	os.Exit(runAgainst(m, cfg))
}

// runAgainst runs the cases against the real cluster cfg names, between
// the range guard and the cleanup, and returns the exit code.
func runAgainst(m *testing.M, cfg Config) int {
	tg, err := NewRealTarget(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pveconformance:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := tg.CheckRange(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "pveconformance: refusing to run:", err)
		return 2
	}
	fmt.Fprintf(os.Stderr, "pveconformance: run %s against %s, node %s, VMIDs %s, pool %s\n", tg.RunID(), tg.Name(), tg.Node(), tg.VMIDs(), tg.Pool())
	realTarget = tg
	code := m.Run()
	if err := tg.Cleanup(ctx, func(s string) { fmt.Fprintln(os.Stderr, "pveconformance: cleanup:", s) }); err != nil {
		fmt.Fprintln(os.Stderr, "pveconformance:", err)
		code = 1
	}
	return code
}
