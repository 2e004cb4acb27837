package snapshotpolicy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestSchedule(t *testing.T) {
	cases := map[string]struct {
		reason       string
		schedule, tz string
		now          time.Time
		wantNext     time.Time
		wantErr      bool
	}{
		"EveryTenMinutes": {reason: "five-field cron in UTC", schedule: "*/10 * * * *", now: at("2026-01-05T10:03:00Z"), wantNext: at("2026-01-05T10:10:00Z")},
		"Descriptor":      {reason: "@daily is midnight", schedule: "@daily", now: at("2026-01-05T10:03:00Z"), wantNext: at("2026-01-06T00:00:00Z")},
		"TimeZone":        {reason: "09:00 in Berlin is 08:00 UTC in winter", schedule: "0 9 * * *", tz: "Europe/Berlin", now: at("2026-01-05T10:03:00Z"), wantNext: at("2026-01-06T08:00:00Z")},
		"BadCron":         {reason: "a schedule with six fields is refused", schedule: "0 0 9 * * *", wantErr: true},
		"BadZone":         {reason: "an unknown time zone is refused", schedule: "@daily", tz: "Mars/Olympus", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := scheduleOf(&v1alpha1.VirtualMachineSnapshotPolicySpec{SnapshotSchedule: tc.schedule, TimeZone: tc.tz})
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s: error = %v, want error %v", tc.reason, err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if got := s.Next(tc.now); !got.Equal(tc.wantNext) {
				t.Errorf("%s: next = %s, want %s", tc.reason, got, tc.wantNext)
			}
		})
	}
}

func TestLatestDue(t *testing.T) {
	s, err := scheduleOf(&v1alpha1.VirtualMachineSnapshotPolicySpec{SnapshotSchedule: "*/10 * * * *"})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason    string
		next, now time.Time
		want      time.Time
	}{
		"OnTime":      {reason: "the slot itself when it is now", next: at("2026-01-05T10:10:00Z"), now: at("2026-01-05T10:10:00Z"), want: at("2026-01-05T10:10:00Z")},
		"ThreeMissed": {reason: "one run, for the latest missed slot", next: at("2026-01-05T10:20:00Z"), now: at("2026-01-05T10:47:00Z"), want: at("2026-01-05T10:40:00Z")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := latestDue(s, tc.next, tc.now); !got.Equal(tc.want) {
				t.Errorf("%s: latestDue = %s, want %s", tc.reason, got, tc.want)
			}
		})
	}
}

func TestPruned(t *testing.T) {
	now := at("2026-01-05T12:00:00Z")
	snap := func(name, scheduled string) v1alpha1.VirtualMachineSnapshot {
		s := v1alpha1.VirtualMachineSnapshot{}
		s.Name = name
		s.Annotations = map[string]string{AnnotationScheduledAt: scheduled}
		return s
	}
	snaps := []v1alpha1.VirtualMachineSnapshot{
		snap("h08", "2026-01-05T08:00:00Z"), snap("h11", "2026-01-05T11:00:00Z"),
		snap("h09", "2026-01-05T09:00:00Z"), snap("h10", "2026-01-05T10:00:00Z"),
	}
	cases := map[string]struct {
		reason string
		r      *v1alpha1.SnapshotRetention
		want   []string
	}{
		"NoRetention": {reason: "without a rule every snapshot stays", r: nil, want: nil},
		"KeepLast":    {reason: "the two newest stay, the oldest go first", r: &v1alpha1.SnapshotRetention{KeepLast: ptr.To[int32](2)}, want: []string{"h09", "h08"}},
		"KeepWithin":  {reason: "snapshots younger than 150 minutes stay", r: &v1alpha1.SnapshotRetention{KeepWithin: &metav1.Duration{Duration: 150 * time.Minute}}, want: []string{"h09", "h08"}},
		"EitherKeeps": {reason: "kept when either rule keeps it", r: &v1alpha1.SnapshotRetention{KeepLast: ptr.To[int32](1), KeepWithin: &metav1.Duration{Duration: 3*time.Hour + time.Minute}}, want: []string{"h08"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, s := range pruned(tc.r, snaps, now) {
				got = append(got, s.Name)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s: pruned (-want +got):\n%s", tc.reason, d)
			}
		})
	}
}
