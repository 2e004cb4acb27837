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

package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// grants hands out the delays it is given, one per When, and counts them.
type grants struct {
	delays []time.Duration
	asked  int
}

func (g *grants) When(string) time.Duration {
	g.asked++
	if len(g.delays) == 0 {
		return 0
	}
	d := g.delays[0]
	g.delays = g.delays[1:]
	return d
}
func (g *grants) Forget(string)          {}
func (g *grants) NumRequeues(string) int { return 0 }

type countingReconciler struct{ runs int }

func (c *countingReconciler) Reconcile(context.Context, reconcile.Request) (reconcile.Result, error) {
	c.runs++
	return reconcile.Result{}, nil
}

// arrival is one arrival of the request, at an offset from the start.
type arrival struct {
	at          time.Duration
	wantRequeue time.Duration // 0: runs
}

func TestReconcileKeepsTheReservedSlot(t *testing.T) {
	cases := map[string]struct {
		reason    string
		delays    []time.Duration
		arrivals  []arrival
		wantRuns  int
		wantAsked int
	}{
		"Free": {
			reason:    "A request the limiter does not defer runs at once.",
			arrivals:  []arrival{{at: 0}},
			wantRuns:  1,
			wantAsked: 1,
		},
		"DeferredThenRunsInItsSlot": {
			reason:    "A deferred request runs when it comes back for its slot, without a second token.",
			delays:    []time.Duration{5 * time.Second},
			arrivals:  []arrival{{at: 0, wantRequeue: 5 * time.Second}, {at: 5 * time.Second}},
			wantRuns:  1,
			wantAsked: 1,
		},
		"EarlyArrivalsWaitForTheSlot": {
			reason: "Arrivals before the slot (a requeue after Create, a watch event) wait for the slot the request holds " +
				"instead of running on its token and leaving the slot idle.",
			delays: []time.Duration{5 * time.Second},
			arrivals: []arrival{
				{at: 0, wantRequeue: 5 * time.Second},
				{at: time.Second, wantRequeue: 4 * time.Second},
				{at: 3 * time.Second, wantRequeue: 2 * time.Second},
				{at: 5 * time.Second},
			},
			wantRuns:  1,
			wantAsked: 1,
		},
		"NextArrivalAfterTheSlotAsksAgain": {
			reason:    "Once the slot's reconcile ran, the next arrival needs a token of its own.",
			delays:    []time.Duration{2 * time.Second, 3 * time.Second},
			arrivals:  []arrival{{at: 0, wantRequeue: 2 * time.Second}, {at: 2 * time.Second}, {at: 4 * time.Second, wantRequeue: 3 * time.Second}},
			wantRuns:  1,
			wantAsked: 2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Unix(1_000_000, 0)
			now := start
			g := &grants{delays: tc.delays}
			inner := &countingReconciler{}
			r := NewReconciler("managed/virtualmachine", inner, g)
			r.now = func() time.Time { return now }
			req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "vm"}}
			for _, a := range tc.arrivals {
				now = start.Add(a.at)
				got, err := r.Reconcile(t.Context(), req)
				if err != nil {
					t.Fatalf("\n%s\nat %s: Reconcile: %v", tc.reason, a.at, err)
				}
				if diff := cmp.Diff(reconcile.Result{RequeueAfter: a.wantRequeue}, got); diff != "" {
					t.Errorf("\n%s\nat %s: -want, +got:\n%s", tc.reason, a.at, diff)
				}
			}
			if inner.runs != tc.wantRuns || g.asked != tc.wantAsked {
				t.Errorf("\n%s\nreconciles run %d, tokens asked %d; want %d and %d", tc.reason, inner.runs, g.asked, tc.wantRuns, tc.wantAsked)
			}
		})
	}
}

// TestTokensPerReconcile drives the shared global limiter crossplane-runtime
// builds (a token bucket) with a request that arrives three times while
// deferred: one token is spent, for the one reconcile that runs.
func TestTokensPerReconcile(t *testing.T) {
	bucket := &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(1), 1)}
	bucket.Allow() // empty the bucket: the next request waits about a second
	inner := &countingReconciler{}
	r := NewReconciler("c", inner, bucket)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "x"}}
	for range 3 {
		res, _ := r.Reconcile(t.Context(), req)
		if res.RequeueAfter <= 0 {
			t.Fatalf("request ran before its slot (requeue %v)", res.RequeueAfter)
		}
	}
	if inner.runs != 0 {
		t.Fatalf("%d reconciles ran before the slot", inner.runs)
	}
	// Tokens reserved so far: the first arrival's only, so a new item waits
	// about one more second, not three.
	if d := bucket.When("other"); d > 2*time.Second+100*time.Millisecond {
		t.Fatalf("another item waits %v: the early arrivals took tokens", d)
	}
}
