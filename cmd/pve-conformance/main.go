// Command pve-conformance helps run the conformance suite (test/pveconformance)
// against a real Proxmox VE. It reads the same environment as the suite
// (PVE_ENDPOINT, credentials, PVE_NODE, PVE_STORAGE, PVE_VMID_RANGE,
// PVE_POOL, PVE_CA_FILE or PVE_INSECURE):
//
//	go run ./cmd/pve-conformance check    # is the VMID range empty? (the suite's guard)
//	go run ./cmd/pve-conformance cleanup  # remove what an interrupted run left
//
// cleanup removes only guests in the VMID range whose name starts with the
// suite's prefix (pvecf-) and files with that prefix on the content storage.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/kubemox/provider-proxmox/test/pveconformance"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pve-conformance:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 1 || (args[0] != "cleanup" && args[0] != "check") {
		return fmt.Errorf("usage: pve-conformance check|cleanup")
	}
	cfg, onReal, err := pveconformance.ConfigFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	if !onReal {
		return fmt.Errorf("%s is not set: nothing to %s (the simulator target needs no cleanup)", pveconformance.EnvEndpoint, args[0])
	}
	tg, err := pveconformance.NewRealTarget(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	if args[0] == "check" {
		if err := tg.CheckRange(ctx); err != nil {
			return err
		}
		fmt.Printf("VMID range %s on %s is empty: the suite may run\n", cfg.VMIDs, cfg.Endpoint)
		return nil
	}
	return tg.Cleanup(ctx, func(s string) { fmt.Println(s) })
}
