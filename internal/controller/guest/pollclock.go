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

package guest

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/polling"
)

const (
	// NotReadyPoll is how soon a resource that is not Ready (or has a task
	// running) is observed again.
	NotReadyPoll = 3 * time.Second
	// BusyListingAge bounds how old the /cluster/resources view may be for
	// a resource with work under way.
	BusyListingAge = 2 * time.Second
	// MaxSteadyAgeFactor caps a Ready resource's listing age at this many
	// poll intervals, however slow its cycle.
	MaxSteadyAgeFactor = 5
)

// Stamps remembers one time per resource (by UID): when it was last
// observed, or when its guest agent was last asked. Shared by the workers of
// one controller.
type Stamps struct {
	mu sync.Mutex
	at map[types.UID]time.Time
}

// NewStamps returns an empty set of stamps.
func NewStamps() *Stamps { return &Stamps{at: map[types.UID]time.Time{}} }

// Since returns how long ago uid was stamped (0 the first time) and stamps
// it now.
func (s *Stamps) Since(uid types.UID, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.at[uid]
	s.at[uid] = now
	if !ok {
		return 0
	}
	return now.Sub(last)
}

// Due reports whether uid was never stamped or at least every ago, and
// stamps it now if so: a throttle of one action per every.
func (s *Stamps) Due(uid types.UID, now time.Time, every time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if last, ok := s.at[uid]; ok && now.Sub(last) < every {
		return false
	}
	s.at[uid] = now
	return true
}

// Forget drops uid's stamp (its resource is going away, or what was
// throttled is due again).
func (s *Stamps) Forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.at, uid)
}

// ListingAge returns how old the connection's /cluster/resources view may be
// for a resource, stamping its observation. A settled resource (Ready,
// nothing under way) accepts a view as old as its own observation cycle:
// the poll interval (steady), or longer when the global reconcile rate
// stretches it, up to MaxSteadyAgeFactor poll intervals; so a connection
// reads the listing about once per cycle whatever the number of guests.
// Anything else accepts BusyListingAge.
func (s *Stamps) ListingAge(uid types.UID, settled bool, steady time.Duration, now time.Time) time.Duration {
	if !settled {
		return BusyListingAge
	}
	cycle := s.Since(uid, now)
	return min(max(steady, cycle), MaxSteadyAgeFactor*steady)
}

// IsReady reports whether the resource's Ready condition is True.
func IsReady(mg resource.Conditioned) bool {
	return mg.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
}

// PollInterval returns the poll-interval hook (managed.WithPollIntervalHook)
// of kind: it observes a resource again within NotReadyPoll while it is not
// Ready or soon says so (work under way), and otherwise after poll (the
// provider's interval, or the resource's crossplane.io/poll-interval) with
// p's jitter; p records each delay.
func PollInterval(kind string, soon func(mg resource.Managed) bool, p polling.Policy) func(mg resource.Managed, poll time.Duration) time.Duration {
	return func(mg resource.Managed, poll time.Duration) time.Duration {
		var d time.Duration
		if !IsReady(mg) || soon(mg) {
			d = p.Busy(kind, NotReadyPoll)
		} else {
			d = p.Settled(kind, poll)
		}
		showNextCheck(mg, time.Now().Add(d))
		return d
	}
}

// showNextCheck writes when mg is checked next into its status, which the
// reconciler is about to write (status.nextCheckTime, kubectl get -o wide).
// Whole seconds: a finer time tells a reader nothing more.
func showNextCheck(mg resource.Managed, at time.Time) {
	if s, ok := mg.(interface{ GetPollStatus() *v1alpha1.PollStatus }); ok {
		s.GetPollStatus().SetNextCheckTime(metav1.NewTime(at.Truncate(time.Second)))
	}
}
