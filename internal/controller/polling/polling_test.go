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

package polling

import (
	"testing"
	"time"
)

// Jitter moves a settled check by at most its share of the interval, either
// way, and actually moves it; none leaves the interval as it is.
func TestSettledJitter(t *testing.T) {
	cases := map[string]struct {
		reason   string
		percent  uint
		interval time.Duration
	}{
		"None":        {reason: "No jitter checks exactly at the interval.", percent: 0, interval: time.Minute},
		"Default":     {reason: "10% of a minute is up to 6s either way.", percent: 10, interval: time.Minute},
		"Annotation":  {reason: "The share applies to a resource's own interval.", percent: 10, interval: 5 * time.Second},
		"AboveBounds": {reason: "A share above the maximum is the maximum: a check is never due at once.", percent: 150, interval: time.Minute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := Policy{JitterPercentage: tc.percent}
			share := float64(min(tc.percent, MaxJitterPercentage)) / 100
			lo := tc.interval - time.Duration(share*float64(tc.interval))
			hi := tc.interval + time.Duration(share*float64(tc.interval))
			seen := map[time.Duration]bool{}
			for range 200 {
				d := p.Settled("VirtualMachine", tc.interval)
				if d < lo || d > hi || d <= 0 {
					t.Fatalf("%s\nSettled(%s) = %s, want within [%s, %s] and positive", tc.reason, tc.interval, d, lo, hi)
				}
				seen[d] = true
			}
			if moved := len(seen) > 1; moved != (tc.percent > 0) {
				t.Errorf("%s\n%d distinct delays over 200 checks with %d%% jitter", tc.reason, len(seen), tc.percent)
			}
		})
	}
}

// Work under way is checked again after its own short delay, unjittered.
func TestBusyUnjittered(t *testing.T) {
	p := Policy{JitterPercentage: 50}
	if d := p.Busy("Container", 3*time.Second); d != 3*time.Second {
		t.Errorf("Busy(3s) = %s, want 3s", d)
	}
}
