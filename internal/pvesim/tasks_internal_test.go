package pvesim

import (
	"fmt"
	"testing"
	"time"
)

// A worker's error becomes one line as fork_worker writes it: PVE::Exception's text (a
// coded exception starts with its code and lists its parameters, one per line), chomped,
// newlines turned into spaces.
func TestWorkerErrorLine(t *testing.T) {
	cases := map[string]struct {
		reason string
		err    error
		want   string
	}{
		"plain die": {reason: "die \"...\\n\" stays as it is", err: errInternal("VM 100 already running"), want: "VM 100 already running"},
		"parameter exception": {
			reason: "raise_param_exc: code, message, then each parameter in name order",
			err:    errParams(map[string]string{"scsi0": "invalid format", "ide2": "volume 'local:iso/x.iso' does not exist"}),
			want:   "400 Parameter verification failed. ide2: volume 'local:iso/x.iso' does not exist scsi0: invalid format",
		},
		"permission exception": {
			reason: "raise_perm_exc keeps its 403",
			err:    errf(403, "Permission check failed (/vms/100, VM.Allocate)"),
			want:   "403 Permission check failed (/vms/100, VM.Allocate)",
		},
		"multi-line die": {reason: "inner newlines become spaces", err: fmt.Errorf("%s", "first\nsecond\n"), want: "first second"},
		"worker prefix": {
			reason: "die \"$emsg $err\" around an exception keeps the exception's text",
			err:    dieWith("unable to create VM 100 -", errParam("ide2", "bad")),
			want:   "unable to create VM 100 - 400 Parameter verification failed. ide2: bad",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := workerErrorLine(tc.err); got != tc.want {
				t.Errorf("%s:\n got %q\nwant %q", tc.reason, got, tc.want)
			}
		})
	}
}

func TestReasonPhraseRewrite(t *testing.T) {
	head := "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n" + reasonHeader + ": VM is locked (clone)\r\nServer: pve\r\n\r\n{}"
	out, ok := withReasonPhrase([]byte(head))
	want := "HTTP/1.1 500 VM is locked (clone)\r\nContent-Type: application/json\r\nServer: pve\r\n\r\n{}"
	if !ok || string(out) != want {
		t.Fatalf("got %q (%v), want %q", out, ok, want)
	}
	for _, p := range []string{"", "HTTP/1.1 200 OK\r\n\r\n", "HTTP/1.1 5", "body bytes " + reasonHeader + ": x\r\n\r\n", "HTTP/1.1 500 x\r\n" + reasonHeader + ": y"} {
		if _, ok := withReasonPhrase([]byte(p)); ok {
			t.Errorf("%q rewritten", p)
		}
	}
}

// A task type with a duration range runs a time inside it, not always the same.
func TestTaskDurationRange(t *testing.T) {
	s := &Server{dice: newDice(0), opts: Options{
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
