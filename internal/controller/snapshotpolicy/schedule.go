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

package snapshotpolicy

import (
	"time"

	"github.com/robfig/cron/v3"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// maxMissedSlots bounds the walk over slots missed while the provider was
// down (a minutely schedule down for about a week).
const maxMissedSlots = 10000

// parser reads five-field cron expressions and descriptors (@daily, @every
// 2h), as Kubernetes CronJobs do.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// scheduleOf parses the policy's schedule in its time zone (UTC when none).
func scheduleOf(spec *v1alpha1.VirtualMachineSnapshotPolicySpec) (cron.Schedule, error) {
	loc := time.UTC
	if spec.TimeZone != "" {
		l, err := time.LoadLocation(spec.TimeZone)
		if err != nil {
			return nil, errors.Wrapf(err, "timeZone %q is not a time zone", spec.TimeZone)
		}
		loc = l
	}
	s, err := parser.Parse(spec.SnapshotSchedule)
	if err != nil {
		return nil, errors.Wrapf(err, "snapshotSchedule %q is not a cron schedule", spec.SnapshotSchedule)
	}
	return inLocation{s: s, loc: loc}, nil
}

// inLocation reads a schedule in loc, whatever the location of the times
// it is given.
type inLocation struct {
	s   cron.Schedule
	loc *time.Location
}

func (l inLocation) Next(t time.Time) time.Time { return l.s.Next(t.In(l.loc)) }

// latestDue is the latest slot from next on that is not after now: the one
// run taken for every slot missed up to now.
func latestDue(s cron.Schedule, next, now time.Time) time.Time {
	slot := next
	for range maxMissedSlots {
		after := s.Next(slot)
		if after.IsZero() || after.After(now) {
			return slot
		}
		slot = after
	}
	return slot
}
