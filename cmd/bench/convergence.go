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
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

const (
	benchNS        = "bench"
	benchConn      = "bench"
	templates      = 5
	templateBaseID = 9000
	ciSecret       = "ci"
	// minReconcilesPerVM: one creates (the clone starts), one starts the VM
	// after the clone, one sees it running and reports Ready.
	minReconcilesPerVM = 3
	vmController       = `controller="managed/virtualmachine.proxmox.alperen.cloud"`
	// rateBurst is crossplane-runtime's global limiter's burst, in seconds
	// of its rate (ratelimiter.NewGlobal: rps*10).
	rateBurst = 10
)

// convergence creates vms VirtualMachines cloned from 5 templates across
// the nodes and measures the time until all are Ready against the floor the
// simulator and the reconcile rate impose; then (steady) the requests each
// Ready VM costs per poll interval.
func convergence(ctx context.Context, s settings, vms, passwordFrom, intervals int) (err error) {
	w, p, err := openWorld(ctx, s)
	if err != nil {
		return err
	}
	defer func() { w.close(err) }()
	if err := w.kube.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: ciSecret},
		StringData: map[string]string{"pw": "bench-ci-password"}}); err != nil {
		return err
	}
	if err := w.passwordConnection(ctx, benchConn, "bench@pve", "bench-Password-1"); err != nil {
		return err
	}
	fmt.Printf("convergence: %d VirtualMachines (%d with cloud-init passwordFrom) cloned from %d templates across %d nodes; %s\n",
		vms, passwordFrom, templates, s.nodes, s)

	w.sim.ResetCounters()
	start := time.Now()
	if err := w.createVMs(ctx, vms, passwordFrom); err != nil {
		return err
	}
	created := time.Since(start)
	done, err := w.waitAllReady(ctx, benchNS, vms, 30*time.Minute)
	if err != nil {
		return err
	}
	took := done.Sub(start)
	m, err := p.scrape()
	if err != nil {
		return err
	}
	reconciles := m.sum("controller_runtime_reconcile_total", vmController)
	chain := s.cloneMax + s.start
	// The global limiter lets a burst of rateBurst seconds' worth through
	// at once, then rate per second.
	rateFloor := time.Duration(max(0, float64(vms*minReconcilesPerVM-rateBurst*s.rate)) / float64(s.rate) * float64(time.Second))
	floor := max(chain, rateFloor)
	warn, err := w.warnings(ctx, benchNS)
	if err != nil {
		return err
	}
	fmt.Printf("  all Ready after %s (creating the resources took %s)\n", took.Round(10*time.Millisecond), created.Round(10*time.Millisecond))
	fmt.Printf("  floor %s = max(slowest clone+start %s, (%d VMs x %d reconciles - a burst of %d) / %d per s = %s); ratio %.2f (goal <= 1.1)\n",
		floor.Round(10*time.Millisecond), chain, vms, minReconcilesPerVM, rateBurst*s.rate, s.rate, rateFloor.Round(10*time.Millisecond), took.Seconds()/floor.Seconds())
	// controller-runtime counts the global rate limiter's deferrals too: a
	// deferred request returns at once, asking to come back later.
	fmt.Printf("  reconciles %.0f (%.1f per VM, counting the global rate limiter's deferrals); reconciles that ended in an error (Warning events): %d %v\n",
		reconciles, reconciles/float64(vms), total(warn), warn)
	fmt.Printf("  Proxmox requests during convergence: %s\n", byRoute(w.sim.Counters().ByEndpoint, 1))
	if err := w.checkGuests(vms); err != nil {
		return err
	}
	if intervals > 0 {
		return steady(ctx, w, p, vms, passwordFrom, intervals)
	}
	return nil
}

// steady measures, with every VM Ready, what a poll interval costs.
func steady(ctx context.Context, w *world, p *process, vms, passwordFrom, intervals int) error {
	// Let the creation's follow-up reconciles settle into the poll rhythm.
	time.Sleep(w.set.poll)
	before, err := p.scrape()
	if err != nil {
		return err
	}
	cpu0, err := p.cpuSeconds()
	if err != nil {
		return err
	}
	w.sim.ResetCounters()
	window := time.Duration(intervals) * w.set.poll
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(window):
	}
	c := w.sim.Counters()
	after, err := p.scrape()
	if err != nil {
		return err
	}
	cpu1, err := p.cpuSeconds()
	if err != nil {
		return err
	}
	minutes := window.Minutes()
	perVM := float64(sumCounts(c.ByEndpoint)) / float64(vms*intervals)
	fmt.Printf("steady state: %d Ready VMs (%d with passwordFrom), 1 password connection, %d poll intervals of %s\n", vms, passwordFrom, intervals, w.set.poll)
	fmt.Printf("  Proxmox requests per VM per poll interval: %.3f (goal <= 1 + 1/N = %.3f)\n", perVM, 1+1/float64(vms))
	fmt.Printf("  by route, per VM per interval: %s\n", byRoute(c.ByEndpoint, float64(vms*intervals)))
	fmt.Printf("  by route, per connection per interval: %s\n", byRoute(c.ByEndpoint, float64(intervals)))
	api := after.sum("rest_client_requests_total") - before.sum("rest_client_requests_total")
	fmt.Printf("  provider CPU %.2f s/min; API-server requests %.1f/min (%.3f per VM per interval)\n",
		(cpu1-cpu0)/minutes, api/minutes, api/float64(vms*intervals))
	if n := c.ByEndpoint["POST /access/ticket"]; n > 0 {
		return errors.Errorf("%d logins in the steady state: a ticket lives two hours", n)
	}
	ready, all, err := w.vmStates(ctx, benchNS)
	if err != nil {
		return err
	}
	if ready != all {
		return errors.Errorf("%d of %d VMs not Ready at the end of the steady state", all-ready, all)
	}
	return nil
}

// seedTemplates adds the templates on every node.
func (w *world) seedTemplates() error {
	for n := range w.set.nodes {
		for t := range templates {
			if err := w.sim.AddTemplate(nodeName(n), templateBaseID+n*templates+t, templateName(t)); err != nil {
				return errors.Wrap(err, "cannot add a template")
			}
		}
	}
	return nil
}

func nodeName(i int) string     { return fmt.Sprintf("pve%d", i+1) }
func templateName(i int) string { return fmt.Sprintf("template-%d", i) }

// createVMs creates n VMs, 8 at a time; the first passwordFrom of them
// set a cloud-init password from a Secret.
func (w *world) createVMs(ctx context.Context, n, passwordFrom int) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := w.kube.Create(ctx, w.vm(i, i < passwordFrom)); err != nil {
					mu.Lock()
					first = errors.Wrapf(err, "cannot create VirtualMachine %d", i)
					mu.Unlock()
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

func vmName(i int) string { return fmt.Sprintf("vm-%04d", i) }

func (w *world) vm(i int, passwordFrom bool) *v1alpha1.VirtualMachine {
	clone := &v1alpha1.VirtualMachineCloneSpec{Name: templateName(i % templates), VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 2, Socket: 1, Memory: 2048}}
	if passwordFrom {
		clone.CloudInitConfig = &v1alpha1.CloudInitConfig{User: "ops", PasswordFrom: &v1alpha1.OptionalSecretKeySelector{LocalSecretKeySelector: v1alpha1.LocalSecretKeySelector{Name: ciSecret, Key: "pw"}}}
	}
	return &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: vmName(i)},
		Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: benchConn}},
			Name:         vmName(i), NodeName: nodeName(i % w.set.nodes), Template: clone,
		},
	}
}

// guestsByResource maps each resource name of namespace ns to the VMIDs of
// the guests carrying its marker.
func (w *world) guestsByResource(ns string) map[string][]int {
	out := map[string][]int{}
	for _, g := range w.sim.Guests() {
		_, rest, ok := strings.Cut(g.Config["description"], "crossplane: "+ns+"/")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, " ")
		out[name] = append(out[name], g.VMID)
	}
	return out
}

// checkGuests fails unless each of the n VMs has exactly one guest.
func (w *world) checkGuests(n int) error {
	byName := w.guestsByResource(benchNS)
	dups := 0
	for _, ids := range byName {
		if len(ids) > 1 {
			dups++
		}
	}
	fmt.Printf("  guests: %d resources with a guest, %d with more than one\n", len(byName), dups)
	if len(byName) != n || dups > 0 {
		return errors.Errorf("%d VMs, %d resources with a guest, %d duplicated", n, len(byName), dups)
	}
	return nil
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// byRoute prints counts divided by per, largest first.
func byRoute(m map[string]int, per float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if per == 1 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		} else {
			parts = append(parts, fmt.Sprintf("%s %.3f", k, float64(m[k])/per))
		}
	}
	return strings.Join(parts, ", ")
}
