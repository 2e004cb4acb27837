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

package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// statusGauges are times read from resources' status, one series per
// resource (namespace and name of the Kubernetes object, never what it
// names in Proxmox VE): there are few CustomCertificates and snapshot
// policies, and alerts need to say which one.
type statusGauges struct {
	certExpiry *resourceGauge
	policyNext *resourceGauge
	policyLast *resourceGauge
}

func newStatusGauges(reg prometheus.Registerer) (statusGauges, error) {
	g := statusGauges{}
	var err error
	if g.certExpiry, err = newResourceGauge(reg, CertificateExpiry,
		"When the certificate a CustomCertificate uploaded to Proxmox VE expires (its status.notAfter), in seconds since the epoch."); err != nil {
		return g, err
	}
	if g.policyNext, err = newResourceGauge(reg, SnapshotPolicyNextRun,
		"When a VirtualMachineSnapshotPolicy's next run is due (its status.nextRunTime), in seconds since the epoch; absent while it is paused or suspended."); err != nil {
		return g, err
	}
	if g.policyLast, err = newResourceGauge(reg, SnapshotPolicyLastRun,
		"The scheduled time of a VirtualMachineSnapshotPolicy's last run taken (its status.lastRunTime), in seconds since the epoch."); err != nil {
		return g, err
	}
	return g, nil
}

func newResourceGauge(reg prometheus.Registerer, name, help string) (*resourceGauge, error) {
	vec, err := register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{LabelNamespace, LabelName}))
	return &resourceGauge{vec: vec}, err
}

// SetCertificateExpiries replaces the expiry series with one per
// CustomCertificate in notAfter, so a deleted one's series goes.
func (m *Proxmox) SetCertificateExpiries(notAfter map[types.NamespacedName]time.Time) {
	if m == nil {
		return
	}
	m.status.certExpiry.replace(notAfter)
}

// SnapshotPolicyRuns are a policy's next due and last taken run; a zero
// time is not reported.
type SnapshotPolicyRuns struct {
	Next, Last time.Time
}

// SetSnapshotPolicyRuns replaces the snapshot policy series with one per
// policy in runs.
func (m *Proxmox) SetSnapshotPolicyRuns(runs map[types.NamespacedName]SnapshotPolicyRuns) {
	if m == nil {
		return
	}
	next := make(map[types.NamespacedName]time.Time, len(runs))
	last := make(map[types.NamespacedName]time.Time, len(runs))
	for nn, r := range runs {
		next[nn], last[nn] = r.Next, r.Last
	}
	m.status.policyNext.replace(next)
	m.status.policyLast.replace(last)
}

// resourceGauge is a gauge with one series per resource, replaced as a
// whole: it remembers which resources it reports, to drop the ones gone.
type resourceGauge struct {
	vec  *prometheus.GaugeVec
	mu   sync.Mutex
	seen map[types.NamespacedName]bool
}

// replace sets one series per non-zero time and drops every other series.
// Each resource's series is updated in place, so a scrape never misses one
// that exists before and after.
func (g *resourceGauge) replace(times map[types.NamespacedName]time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := make(map[types.NamespacedName]bool, len(times))
	for nn, t := range times {
		if !t.IsZero() {
			g.vec.WithLabelValues(nn.Namespace, nn.Name).Set(float64(t.Unix()))
			now[nn] = true
		}
	}
	for nn := range g.seen {
		if !now[nn] {
			g.vec.DeleteLabelValues(nn.Namespace, nn.Name)
		}
	}
	g.seen = now
}
