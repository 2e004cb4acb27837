package proxmox

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// The snapshot calls against the simulator: take two (parent tracking,
// vmstate on a running guest), change a description, roll back, delete;
// every async one returns a UPID without waiting.
func TestSnapshotLifecycle(t *testing.T) {
	sim, c := vmSimClient(t)
	ctx := context.Background()
	if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 130, Config: map[string]string{"name": "db", "cores": "2"}, Running: true}); err != nil {
		t.Fatal(err)
	}
	ref := GuestRef{Type: QEMU, Node: "pve", VMID: 130}
	takeSnapshot(t, c, ref, "first", SnapshotOptions{Description: "before upgrade", VMState: true})
	takeSnapshot(t, c, ref, "second", SnapshotOptions{})
	if err := c.SetSnapshotDescription(ctx, ref, "second", "after upgrade"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Snapshots(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		if s.SnapTime.IsZero() {
			t.Errorf("snapshot %s has no snaptime", s.Name)
		}
	}
	want := []Snapshot{
		{Name: "first", Description: "before upgrade", VMState: true},
		{Name: "second", Description: "after upgrade", Parent: "first"},
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(Snapshot{}, "SnapTime")); d != "" {
		t.Errorf("Snapshots (-want +got; the current pseudo-entry must not show):\n%s", d)
	}

	upid, err := c.RollbackSnapshot(ctx, ref, "first")
	if err != nil {
		t.Fatal(err)
	}
	if ts := waitTask(t, c, upid); !ts.Succeeded() || ts.Type != "qmrollback" {
		t.Fatalf("rollback task = %+v", ts)
	}
	if _, err := c.CreateSnapshot(ctx, ref, "current", SnapshotOptions{}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("snapshot named current: %v, want PVE's reserved-name refusal", err)
	}
	upid, err = c.DeleteSnapshot(ctx, ref, "second")
	if err != nil {
		t.Fatal(err)
	}
	if ts := waitTask(t, c, upid); !ts.Succeeded() || ts.Type != "qmdelsnapshot" {
		t.Fatalf("delete task = %+v", ts)
	}
	got, err = c.Snapshots(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "first" {
		t.Errorf("after delete: %+v, want first only", got)
	}
	if _, err := c.Snapshots(ctx, GuestRef{Type: QEMU, Node: "pve", VMID: 999}); !IsGuestNotFound(err) {
		t.Errorf("snapshots of a missing guest: %v, want not found", err)
	}
}

// takeSnapshot takes snapshot name of ref and waits for PVE's task.
func takeSnapshot(t *testing.T, c *Client, ref GuestRef, name string, o SnapshotOptions) {
	t.Helper()
	upid, err := c.CreateSnapshot(context.Background(), ref, name, o)
	if err != nil {
		t.Fatalf("CreateSnapshot(%s): %v", name, err)
	}
	if ts := waitTask(t, c, upid); !ts.Succeeded() || ts.Type != "qmsnapshot" {
		t.Fatalf("snapshot task = %+v", ts)
	}
}
