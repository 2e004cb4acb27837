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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestStamps(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	s := NewStamps()
	first := s.Since("a", t0)                                     // first observation: no cycle yet
	cycle := s.Since("a", t0.Add(90*time.Second))                 // one cycle later
	never := s.Due("b", t0, 30*time.Second)                       // never asked: due, and stamped
	inside := s.Due("b", t0.Add(10*time.Second), 30*time.Second)  // inside the throttle
	elapsed := s.Due("b", t0.Add(30*time.Second), 30*time.Second) // throttle elapsed
	s.Forget("a")
	again := s.Since("a", t0.Add(time.Hour)) // forgotten: first again
	got := []any{first, cycle, never, inside, elapsed, again}
	want := []any{time.Duration(0), 90 * time.Second, true, false, true, time.Duration(0)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stamps: -want, +got:\n%s", diff)
	}
}

func TestListingAge(t *testing.T) {
	const steady = time.Minute
	t0 := time.Unix(1_700_000_000, 0)
	cases := map[string]struct {
		reason  string
		settled bool
		cycle   time.Duration
		want    time.Duration
	}{
		"Busy": {
			reason: "A resource with work under way accepts only a fresh listing.",
			cycle:  time.Minute,
			want:   BusyListingAge,
		},
		"FastCycle": {
			reason:  "A settled resource accepts at least one poll interval.",
			settled: true,
			cycle:   10 * time.Second,
			want:    steady,
		},
		"StretchedCycle": {
			reason:  "A cycle stretched by the global rate accepts a listing as old as the cycle.",
			settled: true,
			cycle:   3 * time.Minute,
			want:    3 * time.Minute,
		},
		"Capped": {
			reason:  "However slow the cycle, the listing age is capped.",
			settled: true,
			cycle:   time.Hour,
			want:    MaxSteadyAgeFactor * steady,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := NewStamps()
			s.Since("uid", t0)
			if got := s.ListingAge("uid", tc.settled, steady, t0.Add(tc.cycle)); got != tc.want {
				t.Errorf("%s\nListingAge(...): want %v, got %v", tc.reason, tc.want, got)
			}
		})
	}
}
