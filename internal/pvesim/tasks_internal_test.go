package pvesim

import (
	"testing"
	"time"
)

// A task type with a duration range runs a time inside it, not always the same.
func TestTaskDurationRange(t *testing.T) {
	s := &Server{opts: Options{
		TaskDurations:    map[string]time.Duration{"qmclone": 2 * time.Second, "": time.Second},
		TaskDurationsMax: map[string]time.Duration{"qmclone": 5 * time.Second, "qmstart": time.Millisecond},
	}}
	seen := map[time.Duration]bool{}
	for range 50 {
		d := s.taskDuration("qmclone")
		if d < 2*time.Second || d >= 5*time.Second {
			t.Fatalf("qmclone ran %s, want within [2s, 5s)", d)
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Errorf("50 clones all ran %v", seen)
	}
	if d := s.taskDuration("qmstart"); d != time.Second {
		t.Errorf("qmstart with a maximum below its default ran %s, want the default 1s", d)
	}
}
