package proxmox

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// TestGuestErrorsNameTheirType checks that the guest methods, which serve
// VMs and containers alike, name the type of the guest they failed on.
func TestGuestErrorsNameTheirType(t *testing.T) {
	c, _ := simClient(t, startSim(t, pvesim.Options{}), useToken)
	cases := map[string]struct {
		reason string
		ref    GuestRef
		want   string
	}{
		"Container": {
			reason: "A container's failed update says container, not VM.",
			ref:    GuestRef{Type: LXC, Node: "pve", VMID: 4242},
			want:   "cannot update configuration of container pve/4242",
		},
		"VM": {
			reason: "A QEMU guest's failed update says VM.",
			ref:    GuestRef{Type: QEMU, Node: "pve", VMID: 4242},
			want:   "cannot update configuration of VM pve/4242",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := c.SetGuestConfig(context.Background(), tc.ref, map[string]string{"description": "x"}, nil)
			if err == nil {
				t.Fatalf("\n%s\nSetGuestConfig of a missing guest: no error", tc.reason)
			}
			// The prefix is ours; what follows is PVE's text.
			got, _, _ := strings.Cut(err.Error(), ": ")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nerror prefix -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
