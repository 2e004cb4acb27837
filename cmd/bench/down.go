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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	downWindow       = time.Minute
	connController   = `controller="providerconfig/proxmoxconnection"`
	conditionExample = 160
)

// down makes the endpoint of a connection that n Ready VMs use stop
// answering (every request hangs past the client's timeout) and measures
// log lines, reconciles and requests reaching Proxmox VE per second over
// the first minute and over a minute starting at after.
func down(ctx context.Context, s settings, n int, after time.Duration) (err error) {
	w, p, err := openWorld(ctx, s)
	if err != nil {
		return err
	}
	defer func() { w.close(err) }()
	if err := w.tokenConnection(ctx, benchNS, "root@pam!down", "down-secret-1"); err != nil {
		return err
	}
	fmt.Printf("down connection: %d VirtualMachines, then every request to the endpoint hangs past the client's 30 s timeout; default log level; %s\n", n, s)
	if err := w.createVMs(ctx, n, 0); err != nil {
		return err
	}
	if _, err := w.waitAllReady(ctx, benchNS, n, 60*time.Minute); err != nil {
		return err
	}
	time.Sleep(10 * time.Second)
	w.sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{PathPattern: "^/", Latency: time.Hour}}})
	failed := time.Now()
	first, err := w.measureDown(ctx, p)
	if err != nil {
		return err
	}
	fmt.Printf("  first minute:          %s\n", first)
	if wait := time.Until(failed.Add(after)); wait > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	later, err := w.measureDown(ctx, p)
	if err != nil {
		return err
	}
	fmt.Printf("  minute from %s: %s\n", after, later)
	return w.printConditions(ctx)
}

// downRates are per-second rates over one window.
type downRates struct{ logs, vmReconciles, connReconciles, requests float64 }

func (r downRates) String() string {
	return fmt.Sprintf("%.2f log lines/s, %.2f VM reconciles/s, %.3f connection reconciles/s, %.3f requests reaching Proxmox VE/s",
		r.logs, r.vmReconciles, r.connReconciles, r.requests)
}

func (w *world) measureDown(ctx context.Context, p *process) (downRates, error) {
	logs0, err := p.logLines()
	if err != nil {
		return downRates{}, err
	}
	m0, err := p.scrape()
	if err != nil {
		return downRates{}, err
	}
	req0 := sumCounts(w.sim.Counters().ByEndpoint)
	select {
	case <-ctx.Done():
		return downRates{}, ctx.Err()
	case <-time.After(downWindow):
	}
	logs1, err := p.logLines()
	if err != nil {
		return downRates{}, err
	}
	m1, err := p.scrape()
	if err != nil {
		return downRates{}, err
	}
	sec := downWindow.Seconds()
	return downRates{
		logs:           float64(logs1-logs0) / sec,
		vmReconciles:   (m1.sum("controller_runtime_reconcile_total", vmController) - m0.sum("controller_runtime_reconcile_total", vmController)) / sec,
		connReconciles: (m1.sum("controller_runtime_reconcile_total", connController) - m0.sum("controller_runtime_reconcile_total", connController)) / sec,
		requests:       float64(sumCounts(w.sim.Counters().ByEndpoint)-req0) / sec,
	}, nil
}

// printConditions groups the VMs by their Ready and Synced conditions and
// prints the connection's.
func (w *world) printConditions(ctx context.Context) error {
	pc := &v1alpha1.ProxmoxConnection{}
	if err := w.kube.Get(ctx, types.NamespacedName{Name: benchConn}, pc); err != nil {
		return err
	}
	c := pc.Status.GetCondition(xpv2.TypeReady)
	fmt.Printf("  connection: Ready=%s %s: %s\n", c.Status, c.Reason, clip(c.Message))
	l := &v1alpha1.VirtualMachineList{}
	if err := w.kube.List(ctx, l, client.InNamespace(benchNS)); err != nil {
		return err
	}
	groups := map[string]int{}
	for i := range l.Items {
		r, sy := l.Items[i].GetCondition(xpv2.TypeReady), l.Items[i].GetCondition(xpv2.TypeSynced)
		groups[fmt.Sprintf("Ready=%s/%s Synced=%s/%s: %s", r.Status, r.Reason, sy.Status, sy.Reason, clip(sy.Message))]++
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return groups[keys[i]] > groups[keys[j]] })
	for _, k := range keys {
		fmt.Printf("  %d VMs: %s\n", groups[k], k)
	}
	return nil
}

func clip(s string) string {
	if len(s) > conditionExample {
		return s[:conditionExample] + "…"
	}
	return s
}
