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

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	soakNS = "soak"
	// soakKeepEvery: every this many cycles keep their VM, so the end state
	// compares resources with guests, not only absences.
	soakKeepEvery = 10
	// soakStep bounds one step (Ready, update applied, gone) under faults.
	soakStep = 10 * time.Minute
	// pastClientTimeout is longer than the client's 30 s per-request timeout.
	pastClientTimeout = 31 * time.Second
)

// soakRun is what one soak run does: cycles create/update/delete cycles,
// parallel at once, kills provider SIGKILLs, the schedule drawn from seed
// (0 picks one).
type soakRun struct {
	cycles, kills, parallel int
	seed                    int64
}

// soak runs create/update/delete cycles while the simulator fails 10% of
// requests with a 5xx, delays 5% past the client's timeout and fails 5% of
// tasks, and the provider is SIGKILLed and restarted at random moments;
// then it compares what exists in the simulator with the resources.
func soak(ctx context.Context, s settings, run soakRun) (err error) {
	cycles, kills, seed := run.cycles, run.kills, run.seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(seed>>1))) //nolint:gosec // a replayable schedule, not a secret
	// The same seed drives the simulator's fault dice and clone run times, so a replay
	// draws the same hits in the same order (which request meets which draw still
	// depends on timing).
	s.simSeed = uint64(seed)
	w, err := newWorld(s)
	if err != nil {
		return err
	}
	defer func() { w.close(err) }()
	if err := w.seedTemplates(); err != nil {
		return err
	}
	if err := w.namespace(ctx, soakNS); err != nil {
		return err
	}
	pr := &restarter{ctx: ctx, w: w}
	if err := pr.start(); err != nil {
		return err
	}
	defer pr.stop()
	if err := w.tokenConnection(ctx, soakNS, "root@pam!soak", "soak-secret-1"); err != nil {
		return err
	}
	fmt.Printf("soak: seed %d (the simulator's fault dice: %d); %d create/update/delete cycles (%d at once, every %dth keeps its VM), %d provider SIGKILLs; faults: 10%% of requests 5xx, 5%% delayed %s, 5%% of tasks fail; %s\n",
		seed, w.sim.Seed(), cycles, run.parallel, soakKeepEvery, kills, pastClientTimeout, s)
	w.sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{
		ErrorRate: 0.1, Status: 500, Message: "simulated failure",
		Latency: pastClientTimeout, LatencyRate: 0.05,
		TaskFailureRate: 0.05, TaskFailureMessage: "simulated task failure",
	}}})

	start := time.Now()
	var done atomic.Int32
	killsDone := make(chan int)
	go func() { killsDone <- pr.killAtRandom(ctx, rng.Int64(), kills, &done, cycles) }()
	if err := w.runCycles(ctx, cycles, run.parallel, &done); err != nil {
		return errors.Wrapf(err, "seed %d", seed)
	}
	killed := <-killsDone
	w.sim.SetFaults(pvesim.Faults{})
	fmt.Printf("  %d cycles done in %s with %d provider SIGKILLs; faults off\n", cycles, time.Since(start).Round(time.Second), killed)
	kept := (cycles + soakKeepEvery - 1) / soakKeepEvery
	if _, err := w.waitAllReady(ctx, soakNS, kept, 10*time.Minute); err != nil {
		return errors.Wrapf(err, "seed %d", seed)
	}
	return w.soakVerdict(ctx, seed, kept)
}

// soakVerdict compares the simulator's guests with the resources.
func (w *world) soakVerdict(ctx context.Context, seed int64, kept int) error {
	byName := w.guestsByResource(soakNS)
	l := &v1alpha1.VirtualMachineList{}
	if err := w.kube.List(ctx, l); err != nil {
		return err
	}
	resources := map[string]bool{}
	notReady := 0
	for i := range l.Items {
		resources[l.Items[i].Name] = true
		if l.Items[i].GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			notReady++
		}
	}
	dups, leaks := 0, 0
	for name, ids := range byName {
		if len(ids) > 1 {
			dups++
		}
		if !resources[name] {
			leaks += len(ids)
		}
	}
	guests := 0
	for _, ids := range byName {
		guests += len(ids)
	}
	fmt.Printf("  end: %d resources (%d expected), %d guests marked as ours; duplicates %d, leaked after delete %d, not Ready %d (goals: equal, 0, 0, 0); seed %d\n",
		len(resources), kept, guests, dups, leaks, notReady, seed)
	if len(resources) != kept || guests != kept || dups > 0 || leaks > 0 || notReady > 0 {
		return errors.Errorf("soak failed (replay with -seed %d)", seed)
	}
	return nil
}

// runCycles runs n cycles, parallel at once.
func (w *world) runCycles(ctx context.Context, n, parallel int, done *atomic.Int32) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range parallel {
		wg.Go(func() {
			for i := range next {
				if err := w.cycle(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
				if c := done.Add(1); c%25 == 0 {
					fmt.Printf("  %d/%d cycles\n", c, n)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// cycle creates a VM, waits until Ready, changes its cores, waits until the
// simulator has them, and deletes it (unless it is kept).
func (w *world) cycle(ctx context.Context, i int) error {
	vm := w.vm(i, false)
	vm.Namespace = soakNS
	vm.Name = fmt.Sprintf("soak-%04d", i)
	vm.Spec.Name = vm.Name
	if err := w.kube.Create(ctx, vm); err != nil {
		return err
	}
	key := types.NamespacedName{Namespace: soakNS, Name: vm.Name}
	if err := w.waitVM(ctx, key, "Ready", func(vm *v1alpha1.VirtualMachine) bool {
		return vm.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
	}); err != nil {
		return err
	}
	if err := w.setCores(ctx, key, 3); err != nil {
		return err
	}
	if err := poll(ctx, soakStep, vm.Name+" with 3 cores in the simulator", func() (bool, string) {
		ids := w.guestsByResource(soakNS)[vm.Name]
		if len(ids) != 1 {
			return false, fmt.Sprintf("guests %v", ids)
		}
		g, _ := w.sim.Guest(ids[0])
		return g.Config["cores"] == "3", "cores " + g.Config["cores"]
	}); err != nil {
		return err
	}
	if i%soakKeepEvery == 0 {
		return nil
	}
	if err := w.kube.Delete(ctx, vm); err != nil {
		return err
	}
	return poll(ctx, soakStep, vm.Name+" gone", func() (bool, string) {
		err := w.kube.Get(ctx, key, &v1alpha1.VirtualMachine{})
		return kerrors.IsNotFound(err), fmt.Sprint(err)
	})
}

func (w *world) waitVM(ctx context.Context, key types.NamespacedName, what string, cond func(*v1alpha1.VirtualMachine) bool) error {
	return poll(ctx, soakStep, key.Name+" "+what, func() (bool, string) {
		vm := &v1alpha1.VirtualMachine{}
		if err := w.kube.Get(ctx, key, vm); err != nil {
			return false, err.Error()
		}
		return cond(vm), fmt.Sprintf("%+v", vm.Status.Conditions)
	})
}

func (w *world) setCores(ctx context.Context, key types.NamespacedName, cores int32) error {
	return poll(ctx, time.Minute, key.Name+" updated", func() (bool, string) {
		vm := &v1alpha1.VirtualMachine{}
		if err := w.kube.Get(ctx, key, vm); err != nil {
			return false, err.Error()
		}
		vm.Spec.Template.Cores = cores
		err := w.kube.Update(ctx, vm)
		return err == nil, fmt.Sprint(err)
	})
}

// restarter keeps one provider process running, killing and restarting it
// on request.
type restarter struct {
	ctx context.Context //nolint:containedctx // the run's context, for every restart
	w   *world
	mu  sync.Mutex
	p   *process
}

func (r *restarter) start() error {
	p, err := r.w.startProvider(r.ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.p = p
	r.mu.Unlock()
	return nil
}

func (r *restarter) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p != nil {
		r.p.kill()
	}
}

// killAtRandom SIGKILLs and restarts the provider kills times at random
// moments 5-30 s apart while cycles remain, and returns how many it did.
func (r *restarter) killAtRandom(ctx context.Context, seed int64, kills int, done *atomic.Int32, cycles int) int {
	rng := rand.New(rand.NewPCG(uint64(seed), 7)) //nolint:gosec // a replayable schedule, not a secret
	for k := 0; k < kills; k++ {
		select {
		case <-ctx.Done():
			return k
		case <-time.After(5*time.Second + time.Duration(rng.Int64N(int64(25*time.Second)))):
		}
		if int(done.Load()) >= cycles {
			return k
		}
		r.stop()
		if err := r.start(); err != nil {
			fmt.Printf("  cannot restart the provider: %v\n", err)
			return k
		}
	}
	return kills
}
