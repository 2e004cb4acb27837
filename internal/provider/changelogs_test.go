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

package provider

import (
	"testing"
)

// A jitter of 100% or more could make a check due at once: refused at start.
func TestPollPolicyJitterBound(t *testing.T) {
	cases := map[string]struct {
		reason  string
		percent uint
		wantErr bool
	}{
		"Off":     {reason: "No jitter is fine.", percent: 0},
		"Default": {reason: "The flag's default is fine.", percent: 10},
		"Highest": {reason: "99% still leaves a check in the future.", percent: 99},
		"Full":    {reason: "100% could schedule a check at once.", percent: 100, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := pollPolicy(Options{PollJitterPercentage: tc.percent})
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s\npollPolicy(%d%%): error %v, want error: %t", tc.reason, tc.percent, err, tc.wantErr)
			}
			if err == nil && p.JitterPercentage != tc.percent {
				t.Errorf("%s\npollPolicy(%d%%) = %d%%", tc.reason, tc.percent, p.JitterPercentage)
			}
		})
	}
}

// Without a socket path change logs are off: no client, no change logger.
func TestChangeLogsOff(t *testing.T) {
	o, err := changeLogOptions(nil, Options{})
	if err != nil || o != nil {
		t.Errorf("changeLogOptions without a socket = %v, %v; want none", o, err)
	}
}
