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
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// recordingLock is the lock below the fence: its writes succeed unless
// failing is set. The fence's logic is ours; the API server is not asked.
type recordingLock struct {
	resourcelock.Interface
	failing bool
}

func (l *recordingLock) Identity() string { return "me" }

func (l *recordingLock) Create(context.Context, resourcelock.LeaderElectionRecord) error {
	return l.write()
}

func (l *recordingLock) Update(context.Context, resourcelock.LeaderElectionRecord) error {
	return l.write()
}

func (l *recordingLock) write() error {
	if l.failing {
		return errors.New("conflict")
	}
	return nil
}

func TestLeaseFence(t *testing.T) {
	const validity = 10 * time.Second
	type step struct {
		after  time.Duration // clock advance before the step
		op     string        // "create", "update", "fail" (a failed update) or "" (only check)
		holder string
	}
	cases := map[string]struct {
		reason string
		steps  []step
		open   bool
	}{
		"NeverLed": {
			reason: "A replica that never wrote the lease sends nothing.",
			open:   false,
		},
		"Acquired": {
			reason: "Right after acquiring the lease the fence is open.",
			steps:  []step{{op: "create", holder: "me"}, {after: 9 * time.Second}},
			open:   true,
		},
		"Renewed": {
			reason: "Each renewal keeps it open for another validity.",
			steps:  []step{{op: "create", holder: "me"}, {after: 8 * time.Second, op: "update", holder: "me"}, {after: 8 * time.Second}},
			open:   true,
		},
		"Frozen": {
			reason: "A replica whose last renewal is older than the validity (it was frozen) is fenced.",
			steps:  []step{{op: "create", holder: "me"}, {after: validity}},
			open:   false,
		},
		"RenewFailed": {
			reason: "A failed renewal does not extend the fence.",
			steps:  []step{{op: "create", holder: "me"}, {after: 6 * time.Second, op: "fail", holder: "me"}, {after: 6 * time.Second}},
			open:   false,
		},
		"Released": {
			reason: "Releasing the lease (a write naming no holder) closes the fence at once.",
			steps:  []step{{op: "create", holder: "me"}, {after: time.Second, op: "update", holder: ""}},
			open:   false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := time.Unix(1_000_000, 0)
			lock := &recordingLock{}
			f := newLeaseFence(lock, validity)
			f.now = func() time.Time { return now }
			for _, s := range tc.steps {
				now = now.Add(s.after)
				lock.failing = s.op == "fail"
				ler := resourcelock.LeaderElectionRecord{HolderIdentity: s.holder}
				switch s.op {
				case "create":
					_ = f.Create(context.Background(), ler)
				case "update", "fail":
					_ = f.Update(context.Background(), ler)
				}
			}
			if got := f.Check() == nil; got != tc.open {
				t.Errorf("%s\nCheck() open = %v, want %v", tc.reason, got, tc.open)
			}
		})
	}
}
