package proxmox

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// TaskLog reads a log's end, where a failure's cause and the TASK line are,
// however long the log: PVE answers at most limit lines from start and puts
// the log's length in "total", which go-proxmox drops (pve-manager
// PVE/API2/Tasks.pm, read_task_log; pve-common src/PVE/Tools.pm,
// dump_logfile). A short log costs one request.
func TestTaskLogReadsTheEnd(t *testing.T) {
	cases := map[string]struct {
		reason string
		extra  int
		// maxReads bounds the log requests: one page, or the measuring
		// reads and the last page.
		maxReads int
	}{
		"Short":       {reason: "a log shorter than a page is one read", extra: 0, maxReads: 1},
		"OnePageLess": {reason: "a log one line short of a page is one read", extra: maxTaskLogLines - 4, maxReads: 1},
		"FullPage":    {reason: "a log of exactly one page is measured to know it ends there", extra: maxTaskLogLines - 1, maxReads: 12},
		"Long":        {reason: "a long log is measured, then its end read", extra: 3 * maxTaskLogLines, maxReads: 16},
		"VeryLong":    {reason: "the measuring reads grow with the log's length's logarithm", extra: 40 * maxTaskLogLines, maxReads: 24},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := startSim(t, pvesim.Options{Nodes: []string{"pve"}})
			if err := srv.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 750, Running: true, Config: map[string]string{"name": "g"}}); err != nil {
				t.Fatal(err)
			}
			c, w := simClient(t, srv, useToken)
			ctx := context.Background()
			upid, err := c.StopGuest(ctx, GuestRef{Type: QEMU, Node: "pve", VMID: 750})
			if err != nil {
				t.Fatalf("StopGuest: %v", err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for ts, err := c.TaskStatus(ctx, upid); err != nil || ts.Running; ts, err = c.TaskStatus(ctx, upid) {
				if time.Now().After(deadline) {
					t.Fatalf("the stop task did not end: %+v %v", ts, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			base, err := c.TaskLog(ctx, upid)
			if err != nil || len(base) == 0 {
				t.Fatalf("TaskLog before: %v %q", err, base)
			}
			extra := make([]string, tc.extra)
			for i := range extra {
				extra[i] = fmt.Sprintf("progress %d", i)
			}
			if err := srv.AppendTaskLog(upid, extra...); err != nil {
				t.Fatal(err)
			}
			// The whole log: the worker's lines, the extra ones, its TASK line.
			whole := append(append(append([]string{}, base[:len(base)-1]...), extra...), base[len(base)-1])
			want := whole[max(0, len(whole)-maxTaskLogLines):]
			before := w.total()
			lines, err := c.TaskLog(ctx, upid)
			if err != nil {
				t.Fatalf("TaskLog: %v", err)
			}
			reads := w.total() - before
			if diff := cmp.Diff(want, lines); diff != "" {
				t.Errorf("%s: TaskLog of a %d-line log: -want +got:\n%s", tc.reason, len(whole), diff)
			}
			if reads > tc.maxReads {
				t.Errorf("%s: %d log requests, want at most %d", tc.reason, reads, tc.maxReads)
			}
		})
	}
}
