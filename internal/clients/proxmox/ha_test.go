package proxmox

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A section that sets no option reads as PVE's defaults (read_and_check_resources_config);
// set options, numbers as strings or numbers, and the old "enabled" alias read as the CRM
// takes them.
func TestHAResourceFromWire(t *testing.T) {
	two, zero := wireInt(2), wireInt(0)
	off := wireText("0")
	cases := map[string]struct {
		reason string
		w      wireHAResource
		want   HAResource
	}{
		"Empty": {reason: "No option set is PVE's defaults.", want: HADefaults()},
		"AllSet": {reason: "Set options are read as given.",
			w:    wireHAResource{State: "stopped", MaxRestart: &two, MaxRelocate: &zero, Failback: &off},
			want: HAResource{State: HAStopped, MaxRestart: 2, MaxRelocate: 0, Failback: false}},
		"Enabled": {reason: "enabled is an alias of started.", w: wireHAResource{State: "enabled"}, want: HADefaults()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.w.resource()); diff != "" {
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
