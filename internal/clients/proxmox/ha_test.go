package proxmox

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A section that sets no option reads as PVE's defaults (read_and_check_resources_config);
// set options, numbers as strings or numbers, and the old "enabled" alias read as the CRM
// takes them.
func TestHAResourceFromWire(t *testing.T) {
	cases := map[string]struct {
		reason string
		row    string
		want   HAResource
	}{
		"Empty": {reason: "No option set is PVE's defaults.", row: `{"sid":"vm:100"}`, want: HADefaults()},
		"AllSet": {reason: "Set options are read as given, numbers as strings or numbers.",
			row:  `{"sid":"vm:100","state":"stopped","max_restart":"2","max_relocate":0,"failback":"0"}`,
			want: HAResource{State: HAStopped, MaxRestart: 2, MaxRelocate: 0, Failback: false}},
		"Enabled": {reason: "enabled is an alias of started.", row: `{"sid":"vm:100","state":"enabled"}`, want: HADefaults()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var row rawRow
			if err := json.Unmarshal([]byte(tc.row), &row); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, haResourceOfRow(row)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// Against the simulator: a container becomes ct:<vmid> with every option written, an update
// changes them, a delete removes it, and a guest that is not an HA resource reads not found.
func TestHAResourceAgainstSimulator(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	if err := srv.AddGuest(pvesim.GuestSeed{Kind: pvesim.KindLXC, Node: "pve", VMID: 171,
		Config: map[string]string{"hostname": "ct", "rootfs": "local-lvm:2"}}); err != nil {
		t.Fatal(err)
	}
	c, _ := simClient(t, srv, useToken)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ref := GuestRef{Type: LXC, Node: "pve", VMID: 171}
	if _, found, err := c.HAResourceOf(ctx, ref); err != nil || found {
		t.Fatalf("before create: found %v, %v", found, err)
	}
	want := HAResource{State: HAStopped, MaxRestart: 3, MaxRelocate: 0, Failback: false}
	if err := c.CreateHAResource(ctx, ref, want); err != nil {
		t.Fatal(err)
	}
	if opts, _ := srv.HAResource(171); opts["max_relocate"] != "0" || opts["failback"] != "0" {
		t.Errorf("section after create: %v; want every option written", opts)
	}
	got, found, err := c.HAResourceOf(ctx, ref)
	if err != nil || !found {
		t.Fatalf("after create: found %v, %v", found, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after create -want, +got:\n%s", diff)
	}
	want.State = HAStarted
	if err := c.UpdateHAResource(ctx, ref, want); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := c.HAResourceOf(ctx, ref); got != want {
		t.Errorf("after update: %+v, want %+v", got, want)
	}
	if err := c.DeleteHAResource(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.HAResource(171); ok {
		t.Error("still an HA resource after delete")
	}
}

// The HA listing is the connection's shared one: the reads of several guests
// in a poll cost one request, and the client's own write is seen by the next
// read.
func TestHAResourceReadsShareTheListing(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	for _, vmid := range []int{171, 172} {
		if err := srv.AddGuest(pvesim.GuestSeed{Kind: pvesim.KindLXC, Node: "pve", VMID: vmid,
			Config: map[string]string{"hostname": "ct", "rootfs": "local-lvm:2"}}); err != nil {
			t.Fatal(err)
		}
	}
	c, w := simClient(t, srv, useToken)
	a, b := GuestRef{Type: LXC, Node: "pve", VMID: 171}, GuestRef{Type: LXC, Node: "pve", VMID: 172}
	for _, ref := range []GuestRef{a, b} {
		if _, found, err := c.HAResourceOf(t.Context(), ref); err != nil || found {
			t.Fatalf("%s: found %v, %v", ref, found, err)
		}
	}
	if got := w.count("GET /cluster/ha/resources"); got != 1 {
		t.Errorf("two guests' reads sent %d listings, want 1", got)
	}
	if err := c.CreateHAResource(t.Context(), b, HADefaults()); err != nil {
		t.Fatal(err)
	}
	if _, found, err := c.HAResourceOf(t.Context(), b); err != nil || !found {
		t.Errorf("after the client's own create: found %v, %v", found, err)
	}
}
