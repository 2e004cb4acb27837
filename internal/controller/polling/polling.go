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

// Package polling spaces the checks of settled resources the way Crossplane
// operators tune them: --poll-jitter-percentage spreads them around the
// poll interval so resources created together do not stay in step, and
// crossplane.io/poll-interval (read by crossplane-runtime's managed
// reconciler) sets one resource's interval. It also makes crossplane.io/paused
// stop the reconcilers the provider wrote itself, as it stops the managed
// one.
package polling

import (
	"math/rand/v2"
	"time"

	"github.com/kubemox/provider-proxmox/internal/metrics"
)

// MaxJitterPercentage bounds --poll-jitter-percentage: at 100% a check could
// be due at once.
const MaxJitterPercentage = 99

// Policy is how the next check of a settled resource is scheduled. The zero
// Policy checks exactly at the poll interval and records nothing.
type Policy struct {
	// JitterPercentage moves each scheduled check by up to this share of
	// its interval, either way (0 to MaxJitterPercentage). A share rather
	// than a fixed duration: a resource polled every 10s by annotation
	// moves by as large a share as one polled hourly.
	JitterPercentage uint
	// Metrics receives each scheduled delay, by kind; nil: none.
	Metrics *metrics.Poll
}

// Settled returns when a settled resource of kind polled every interval is
// to be checked again: interval with the jitter applied; and records it.
func (p Policy) Settled(kind string, interval time.Duration) time.Duration {
	d := p.jittered(interval)
	p.Metrics.NextCheck(kind, d)
	return d
}

// Busy records that a resource of kind with work under way is to be checked
// again after d, which jitter leaves alone (it is already short).
func (p Policy) Busy(kind string, d time.Duration) time.Duration {
	p.Metrics.NextCheck(kind, d)
	return d
}

func (p Policy) jittered(d time.Duration) time.Duration {
	share := float64(min(p.JitterPercentage, MaxJitterPercentage)) / 100
	if share == 0 || d <= 0 {
		return d
	}
	//nolint:gosec // Spreading checks needs no secure randomness.
	offset := (rand.Float64()*2 - 1) * share * float64(d)
	return d + time.Duration(offset)
}
