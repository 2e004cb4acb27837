/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command bench measures the provider at scale and under faults. Each
// program starts a real API server and etcd (internal/testenv), the
// simulator with realistic task durations, and the provider binary, then
// prints its figures with the settings that produced them. It exits
// non-zero only on a correctness failure (a duplicate or leaked VM, a
// resource left not Ready, a request with a revoked credential), never
// because of a timing.
//
//	go run ./cmd/bench [flags] convergence|memory|rotation|soak|down ...
//
// `make bench` runs every program at a size a busy 2-core machine finishes
// in minutes; the flags scale them (see -h).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	var (
		s        settings
		vms      int
		pwFrom   int
		steady   int
		managed  int
		secrets  int
		crds     int
		rotVMs   int
		cycles   int
		kills    int
		parallel int
		seed     int64
		downVMs  int
		downLong time.Duration
	)
	flag.DurationVar(&s.poll, "poll", time.Minute, "the provider's --poll")
	flag.IntVar(&s.rate, "max-reconcile-rate", 10, "the provider's --max-reconcile-rate")
	flag.DurationVar(&s.cloneMin, "clone-min", 2*time.Second, "shortest simulated qmclone task")
	flag.DurationVar(&s.cloneMax, "clone-max", 5*time.Second, "longest simulated qmclone task")
	flag.DurationVar(&s.create, "create", time.Second, "simulated qmcreate task")
	flag.DurationVar(&s.start, "start", time.Second, "simulated qmstart task")
	flag.DurationVar(&s.lag, "resources-lag", 5*time.Second, "how far /cluster/resources lags (pvestatd's cycle is 10 s)")
	flag.IntVar(&s.nodes, "nodes", 3, "simulated cluster nodes")
	concurrent := flag.Int("max-concurrent-requests", 0, "the connections' maxConcurrentRequests (0: the default, 4)")
	flag.IntVar(&vms, "vms", 1000, "convergence: VirtualMachines")
	flag.IntVar(&pwFrom, "password-from", 10, "convergence: how many of the VMs set a cloud-init passwordFrom")
	flag.IntVar(&steady, "steady-intervals", 2, "convergence: poll intervals of steady state measured afterwards (0 skips)")
	flag.IntVar(&managed, "managed", 2000, "memory: managed resources")
	flag.IntVar(&secrets, "secrets", 10000, "memory: Secrets of 10 KiB in other namespaces")
	flag.IntVar(&crds, "crds", 1000, "memory: unrelated CRDs")
	flag.IntVar(&rotVMs, "rotation-vms", 200, "rotation: VirtualMachines on the rotated connection")
	flag.IntVar(&cycles, "cycles", 300, "soak: create/update/delete cycles")
	flag.IntVar(&kills, "kills", 20, "soak: provider SIGKILLs")
	flag.IntVar(&parallel, "soak-parallel", 10, "soak: cycles run at once")
	flag.Int64Var(&seed, "seed", 0, "soak: random seed (0 picks one; printed)")
	flag.IntVar(&downVMs, "down-vms", 2000, "down: VirtualMachines on the connection that stops answering")
	flag.DurationVar(&downLong, "down-after", 5*time.Minute, "down: when the second measurement starts")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: bench [flags] convergence|memory|rotation|soak|down ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	s.concurrent = int32(*concurrent) //nolint:gosec // a small count from the command line
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runPrograms(flag.Args(), map[string]func() error{
		"convergence": func() error { return convergence(ctx, s, vms, min(pwFrom, vms), steady) },
		"memory":      func() error { return memory(ctx, s, managed, secrets, crds) },
		"rotation":    func() error { return rotation(ctx, s, rotVMs) },
		"soak": func() error {
			return soak(ctx, s, soakRun{cycles: cycles, kills: kills, parallel: max(1, parallel), seed: seed})
		},
		"down": func() error { return down(ctx, s, downVMs, downLong) },
	})
	cancel()
	os.Exit(code)
}

// runPrograms runs the named programs in order and returns the exit code:
// 2 for an unknown name, 1 when one failed.
func runPrograms(names []string, programs map[string]func() error) int {
	if len(names) == 0 {
		flag.Usage()
		return 2
	}
	code := 0
	for _, name := range names {
		run, ok := programs[name]
		if !ok {
			flag.Usage()
			return 2
		}
		started := time.Now()
		if err := run(); err != nil {
			fmt.Fprintf(os.Stderr, "bench %s: FAIL: %v\n", name, err)
			code = 1
		}
		fmt.Printf("bench %s finished in %s\n\n", name, time.Since(started).Round(time.Second))
	}
	return code
}
