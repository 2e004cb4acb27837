package proxmox

import (
	"context"
	"strings"
	"testing"
	"time"
)

// waitTask polls a task until it stops.
func waitTask(t *testing.T, c *Client, upid string) TaskStatus {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ts, err := c.TaskStatus(context.Background(), upid)
		if err != nil {
			t.Fatalf("task %s: %v", upid, err)
		}
		if !ts.Running {
			return ts
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still running", upid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The guest operations against the simulator: clone, read, power, agent,
// resize, delete; every async one returns a UPID without waiting.
func TestGuestLifecycle(t *testing.T) {
	sim, c := vmSimClient(t)
	ctx := context.Background()
	if err := sim.AddTemplate("pve", 9000, "tpl"); err != nil {
		t.Fatal(err)
	}
	src := GuestRef{Type: QEMU, Node: "pve", VMID: 9000}
	upid, err := c.CloneGuest(ctx, src, CloneOptions{NewID: 120, Name: "web", Description: "notes\nmarker", Full: true, Storage: "local-lvm"})
	if err != nil || !strings.HasPrefix(upid, "UPID:pve:") {
		t.Fatalf("CloneGuest = %q, %v", upid, err)
	}
	if ts := waitTask(t, c, upid); !ts.Succeeded() || ts.Type != "qmclone" {
		t.Fatalf("clone task = %+v", ts)
	}
	if _, err := c.CloneGuest(ctx, src, CloneOptions{NewID: 120, Full: true}); !IsAlreadyExists(err) {
		t.Errorf("second clone to 120: %v, want already exists", err)
	}
	ref := GuestRef{Type: QEMU, Node: "pve", VMID: 120}
	cfg, err := c.GuestPending(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if d := Description(cfg); d != "notes\nmarker" {
		t.Errorf("description = %q", d)
	}
	if !AgentEnabled(cfg) {
		t.Error("the template's agent=1 not seen")
	}
	if err := c.SetGuestConfig(ctx, ref, map[string]string{"cores": "4"}, nil); err != nil {
		t.Fatal(err)
	}
	upid, err = c.ResizeDisk(ctx, ref, "scsi0", "20G")
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, c, upid)
	upid, err = c.StartGuest(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, c, upid)
	st, err := c.GuestStatus(ctx, ref)
	if err != nil || !st.Running() || st.Template {
		t.Fatalf("status = %+v, %v", st, err)
	}
	ifs, err := c.AgentNetworkInterfaces(ctx, ref)
	if err != nil {
		t.Fatalf("agent: %v", err)
	}
	if ip := FirstIPv4(ifs); ip == "" {
		t.Errorf("no IPv4 from the agent: %+v", ifs)
	}
	tasks, err := c.GuestTasks(ctx, "pve", 120, 10)
	if err != nil || len(tasks) < 2 {
		t.Fatalf("GuestTasks = %d tasks, %v", len(tasks), err)
	}
	if _, err := c.DeleteGuest(ctx, ref, true); !IsGuestRunning(err) {
		t.Errorf("deleting a running VM: %v, want 'is running'", err)
	}
	upid, err = c.ShutdownGuest(ctx, ref, 30, true)
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, c, upid)
	upid, err = c.DeleteGuest(ctx, ref, true)
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, c, upid)
	if _, err := c.GuestPending(ctx, ref); !IsGuestNotFound(err) {
		t.Errorf("after delete: %v, want not found", err)
	}
	if _, ok := sim.Guest(120); ok {
		t.Error("guest still in the simulator")
	}
}

// A task PVE does not know (or an id that cannot be one) is reported as
// unknown; a network failure is not an answer about the task.
func TestIsTaskUnknown(t *testing.T) {
	sim, c := vmSimClient(t)
	ctx := context.Background()
	_, err := c.TaskStatus(ctx, "UPID:pve:00001234:00100000:6700AABB:qmstart:100:root@pam:")
	if !IsTaskUnknown(err) {
		t.Errorf("unknown UPID: IsTaskUnknown(%v) = false", err)
	}
	if _, err := c.TaskStatus(ctx, "not-a-upid"); !IsTaskUnknown(err) {
		t.Errorf("malformed UPID: IsTaskUnknown(%v) = false", err)
	}
	sim.Close()
	_, err = c.TaskStatus(ctx, "UPID:pve:00001234:00100000:6700AABB:qmstart:100:root@pam:")
	if err == nil || IsTaskUnknown(err) {
		t.Errorf("server gone: err %v, IsTaskUnknown = %v, want an error that is not 'unknown'", err, IsTaskUnknown(err))
	}
}

func TestGuestTypeTaskType(t *testing.T) {
	cases := map[string]struct {
		typ    GuestType
		action string
		want   string
	}{
		"QEMUReboot":   {typ: QEMU, action: "reboot", want: "qmreboot"},
		"LXCShutdown":  {typ: LXC, action: "shutdown", want: "vzshutdown"},
		"LXCStart":     {typ: LXC, action: "start", want: "vzstart"},
		"QEMUShutdown": {typ: QEMU, action: "shutdown", want: "qmshutdown"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.typ.TaskType(tc.action); got != tc.want {
				t.Errorf("%s.TaskType(%q) = %q, want %q", tc.typ, tc.action, got, tc.want)
			}
		})
	}
}
