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
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Names of the polling metrics, as scraped.
const (
	// NextCheckSeconds is how far ahead each resource's next check was
	// scheduled, observed each time one is.
	NextCheckSeconds = "proxmox_next_check_seconds"

	LabelKind = "kind"
)

// nextCheckBuckets span the seconds of a resource with work under way to
// the hours of a poll-interval annotation.
var nextCheckBuckets = []float64{1, 3, 5, 10, 30, 45, 60, 90, 120, 300, 600, 1800, 3600, 21600, 86400}

// Poll holds the polling collectors. Its methods do nothing on a nil *Poll.
// Series are labelled by kind only: a label per resource would grow with
// the cluster.
type Poll struct {
	next *prometheus.HistogramVec
}

// NewPoll creates the polling collectors and registers them with reg,
// sharing a collector reg already holds.
func NewPoll(reg prometheus.Registerer) (*Poll, error) {
	next, err := register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    NextCheckSeconds,
		Help:    "Seconds from the end of a resource's check to its next scheduled one (poll interval, jitter and crossplane.io/poll-interval applied), by kind.",
		Buckets: nextCheckBuckets,
	}, []string{LabelKind}))
	if err != nil {
		return nil, err
	}
	return &Poll{next: next}, nil
}

// NextCheck records that a resource of kind is to be checked again after d.
func (p *Poll) NextCheck(kind string, d time.Duration) {
	if p == nil {
		return
	}
	p.next.WithLabelValues(kind).Observe(d.Seconds())
}
