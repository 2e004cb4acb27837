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
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	rotTokenID = "root@pam!rotate"
	rotOld     = "rotate-old-secret"
	rotNew     = "rotate-new-secret"
)

// rotation rotates the token of a Secret-backed connection that n VMs use,
// revoking the old secret in the simulator at the same moment, and measures
// how long each VM takes to be observed with the new secret, and whether
// the old one is still sent once the connection has reconciled.
func rotation(ctx context.Context, s settings, n int) (err error) {
	s.logRequests = true
	w, _, err := openWorld(ctx, s)
	if err != nil {
		return err
	}
	defer func() { w.close(err) }()
	if err := w.tokenConnection(ctx, benchNS, rotTokenID, rotOld); err != nil {
		return err
	}
	fmt.Printf("rotation: %d VirtualMachines on one connection whose token lives in a Secret; %s\n", n, s)
	if err := w.createVMs(ctx, n, 0); err != nil {
		return err
	}
	if _, err := w.waitAllReady(ctx, benchNS, n, 60*time.Minute); err != nil {
		return err
	}
	vmids, err := w.vmids(ctx, n)
	if err != nil {
		return err
	}
	// Rotate in steady state: a VM that became Ready before it was seen
	// running asks the guest agent for its IP at its next observation, and
	// those one-off agent requests would share the connection's request slots
	// with the re-observations measured here. Wait until every VM knows its
	// IP, then let the reconciles settle into the poll rhythm.
	if err := w.waitAllIPs(ctx, n, 2*s.poll+time.Minute); err != nil {
		return err
	}
	time.Sleep(10 * time.Second)

	w.sim.ResetCounters()
	rotated := time.Now()
	w.sim.AddToken(rotTokenID, rotNew) // replaces, so revokes, the old secret
	rv, err := w.rotateSecret(ctx)
	if err != nil {
		return err
	}
	reconciled, err := w.waitConnectionAt(ctx, rv)
	if err != nil {
		return err
	}
	latencies, err := w.waitReobserved(ctx, rotated, vmids)
	if err != nil {
		return err
	}
	slices.Sort(latencies)
	floor := time.Duration(float64(n) / float64(s.rate) * float64(time.Second))
	p99 := latencies[(len(latencies)*99+99)/100-1]
	fmt.Printf("  connection Ready on the new Secret revision %s after the rotation\n", reconciled.Sub(rotated).Round(time.Millisecond))
	fmt.Printf("  every VM re-observed with the new secret: p50 %s, p99 %s, max %s after the rotation\n",
		latencies[len(latencies)/2].Round(time.Millisecond), p99.Round(time.Millisecond), latencies[len(latencies)-1].Round(time.Millisecond))
	fmt.Printf("  requests until the last VM was re-observed, by route: %v\n", w.routesWithin(rotated, latencies[len(latencies)-1]))
	fmt.Printf("  VMs first re-observed per 250 ms after the rotation: %v\n", histogram(latencies, 250*time.Millisecond))
	fmt.Printf("  floor at --max-reconcile-rate=%d: %d VMs / %d per s = %s; p99/floor %.2f (goal <= 1.2)\n",
		s.rate, n, s.rate, floor, p99.Seconds()/floor.Seconds())
	old := pvesim.CredentialFingerprint(rotOld)
	var beforeReconcile, afterReconcile int
	for _, r := range w.sim.RequestLog() {
		if r.Fingerprint != old {
			continue
		}
		if r.Time.After(reconciled) {
			afterReconcile++
		} else {
			beforeReconcile++
		}
	}
	fmt.Printf("  requests with the old secret: %d before the connection reconciled the rotation, %d after (goal 0)\n", beforeReconcile, afterReconcile)
	if afterReconcile > 0 {
		return errors.Errorf("%d requests with the revoked secret after the connection reconciled the rotation", afterReconcile)
	}
	return nil
}

// vmids maps each VM's VMID (its external name) to its name.
func (w *world) vmids(ctx context.Context, n int) (map[string]string, error) {
	l := &v1alpha1.VirtualMachineList{}
	if err := w.kube.List(ctx, l); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i := range l.Items {
		if id := meta.GetExternalName(&l.Items[i]); id != "" {
			out[id] = l.Items[i].Name
		}
	}
	if len(out) != n {
		return nil, errors.Errorf("%d of %d VMs have a VMID", len(out), n)
	}
	return out, nil
}

// rotateSecret writes the new token secret and returns the Secret's new
// resourceVersion.
func (w *world) rotateSecret(ctx context.Context) (string, error) {
	sec := &corev1.Secret{}
	if err := w.kube.Get(ctx, types.NamespacedName{Namespace: benchNS, Name: benchConn + "-token"}, sec); err != nil {
		return "", err
	}
	sec.Data = map[string][]byte{"token": []byte(rotNew)}
	if err := w.kube.Update(ctx, sec); err != nil {
		return "", err
	}
	return sec.ResourceVersion, nil
}

// waitConnectionAt waits until the connection is Ready on Secret revision
// rv, and returns when this program saw it.
func (w *world) waitConnectionAt(ctx context.Context, rv string) (time.Time, error) {
	err := poll(ctx, 2*time.Minute, "connection Ready on the rotated Secret", func() (bool, string) {
		pc := &v1alpha1.ProxmoxConnection{}
		if err := w.kube.Get(ctx, types.NamespacedName{Name: benchConn}, pc); err != nil {
			return false, err.Error()
		}
		obs := pc.Status.ObservedSecrets
		ready := pc.Status.GetCondition("Ready").Status == corev1.ConditionTrue
		return ready && len(obs) == 1 && obs[0].ResourceVersion == rv, fmt.Sprintf("%+v", obs)
	})
	return time.Now(), err
}

// waitReobserved waits until the simulator logged a request with the new
// secret for every VMID, and returns each VM's delay after since.
func (w *world) waitReobserved(ctx context.Context, since time.Time, vmids map[string]string) ([]time.Duration, error) {
	fresh := pvesim.CredentialFingerprint(rotNew)
	first := map[string]time.Time{}
	err := poll(ctx, 10*time.Minute, "every VM re-observed with the new secret", func() (bool, string) {
		for _, r := range w.sim.RequestLog() {
			if r.Fingerprint != fresh || r.Rejected {
				continue
			}
			id := vmidInPath(r.Path)
			if _, ours := vmids[id]; ours {
				if _, seen := first[id]; !seen {
					first[id] = r.Time
				}
			}
		}
		return len(first) == len(vmids), fmt.Sprintf("%d of %d re-observed", len(first), len(vmids))
	})
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, 0, len(first))
	for _, t := range first {
		out = append(out, t.Sub(since))
	}
	return out, nil
}

// vmidInPath returns the VMID of /nodes/{node}/qemu/{vmid}/..., or "".
func vmidInPath(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) >= 4 && parts[0] == "nodes" && parts[2] == "qemu" {
		return parts[3]
	}
	return ""
}

// histogram counts sorted durations per bucket of width, from 0 to the last.
func histogram(sorted []time.Duration, width time.Duration) []int {
	if len(sorted) == 0 {
		return nil
	}
	out := make([]int, int(sorted[len(sorted)-1]/width)+1)
	for _, d := range sorted {
		out[int(d/width)]++
	}
	return out
}

// routesWithin counts the simulator's requests in the window of length d
// from start by method and path, node names and VMIDs folded, so that what
// shares the connection's request slots with the re-observations shows.
func (w *world) routesWithin(start time.Time, d time.Duration) map[string]int {
	out := map[string]int{}
	for _, r := range w.sim.RequestLog() {
		if since := r.Time.Sub(start); since >= 0 && since <= d {
			out[r.Method+" "+reNumbered.ReplaceAllString(r.Path, "/N")]++
		}
	}
	return out
}

// reNumbered matches a path segment ending in digits (a VMID, node "pve2").
var reNumbered = regexp.MustCompile(`/[a-z]*\d+`)

// waitAllIPs waits until the n VMs of benchNS report the IP their guest
// agent gave.
func (w *world) waitAllIPs(ctx context.Context, n int, timeout time.Duration) error {
	start := time.Now()
	err := poll(ctx, timeout, fmt.Sprintf("%d VMs with an IP", n), func() (bool, string) {
		l := &v1alpha1.VirtualMachineList{}
		if err := w.kube.List(ctx, l); err != nil {
			return false, err.Error()
		}
		known := 0
		for i := range l.Items {
			if l.Items[i].Namespace == benchNS && l.Items[i].Status.Status.IPAddress != "" {
				known++
			}
		}
		return known == n, fmt.Sprintf("%d of %d know their IP", known, n)
	})
	if err == nil {
		fmt.Printf("  every VM knows its IP %s after all were Ready (steady state)\n", time.Since(start).Round(time.Second))
	}
	return err
}
