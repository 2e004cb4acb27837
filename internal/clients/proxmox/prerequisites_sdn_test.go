package proxmox

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A bridge no node listing holds may be an SDN VNet (pve-network
// src/PVE/API2/Network/SDN/Vnets.pm, index). A PVE without SDN answers the
// listing 501 (pve-manager PVE/API2/Cluster.pm registers /cluster/sdn only
// with pve-network, $have_sdn; PVE/HTTPServer.pm, rest_handler, answers an
// unregistered path "Method ... not implemented"): it has no VNets, so the
// bridge is missing. Any other failure to read the listing is returned as
// an error, never as the user's missing bridge.
func TestCheckPrerequisitesBridgeMayBeAnSDNVNet(t *testing.T) {
	cases := map[string]struct {
		reason      string
		bridge      string
		fault       *pvesim.FaultRule
		wantMissing bool
		wantErr     string
	}{
		"VNet": {
			reason: "a VNet of the cluster's SDN configuration is a bridge, applied or not",
			bridge: "vnet1",
		},
		"NotAVNet": {
			reason: "a name neither the node nor SDN has is refused, saying what exists",
			bridge: "vmbr9", wantMissing: true,
			wantErr: `bridge "vmbr9" does not exist on node "pve" (bridges: vmbr0) nor is it an SDN VNet the connection may see (VNets: vnet1)`,
		},
		"NoSDN": {
			reason: "PVE without SDN answers 501: no VNets, so the bridge is missing",
			bridge: "vnet1", wantMissing: true,
			fault:   &pvesim.FaultRule{Method: http.MethodGet, PathPattern: "/cluster/sdn/vnets", ErrorRate: 1, Status: http.StatusNotImplemented, Message: "Method 'GET /cluster/sdn/vnets' not implemented"},
			wantErr: "(VNets: none)",
		},
		"Forbidden": {
			reason:  "a 403 is no answer about the bridge: it surfaces",
			bridge:  "vnet1",
			fault:   &pvesim.FaultRule{Method: http.MethodGet, PathPattern: "/cluster/sdn/vnets", ErrorRate: 1, Status: http.StatusForbidden, Message: "Permission check failed"},
			wantErr: "cannot list the SDN VNets to check the bridges named",
		},
		"ServerError": {
			reason:  "a 5xx is no answer about the bridge: it surfaces",
			bridge:  "vnet1",
			fault:   &pvesim.FaultRule{Method: http.MethodGet, PathPattern: "/cluster/sdn/vnets", ErrorRate: 1, Status: http.StatusInternalServerError, Message: "unable to read sdn config"},
			wantErr: "unable to read sdn config",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := startSim(t, pvesim.Options{})
			// Not applied yet: only the SDN listing has it, no node's.
			if err := srv.AddVNet(pvesim.VNet{VNet: "vnet1", Zone: "zone1", Tag: 100, Pending: true}); err != nil {
				t.Fatal(err)
			}
			if tc.fault != nil {
				srv.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{*tc.fault}})
			}
			c, _ := simClient(t, srv, useToken)
			err := c.CheckPrerequisites(context.Background(), Prerequisites{Node: "pve", Bridges: []string{tc.bridge}})
			if got := errors.Is(err, ErrMissingPrerequisite); got != tc.wantMissing {
				t.Errorf("%s: missing prerequisite = %v, want %v (err %v)", tc.reason, got, tc.wantMissing, err)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("%s: %v", tc.reason, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("%s: error %v, want it to contain %q", tc.reason, err, tc.wantErr)
			}
		})
	}
}
