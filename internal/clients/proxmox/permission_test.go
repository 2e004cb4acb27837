package proxmox

import (
	"context"
	"errors"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A 403 over the wire (status line and body as pveproxy sends them) leads
// with the privilege and path PVE reports missing; other errors are kept.
func TestExplainPermission(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	c, _ := simClient(t, srv, useToken)
	if err := srv.AddTemplate("pve", 9000, "tmpl"); err != nil {
		t.Fatal(err)
	}
	ref := GuestRef{Type: QEMU, Node: "pve", VMID: 9000}
	cases := map[string]struct {
		reason  string
		status  int
		message string
		want    string
	}{
		"Privilege": {
			reason:  "raise_perm_exc names the path and privilege: they head the error.",
			status:  403,
			message: "Permission check failed (/vms/101, VM.Allocate)",
			want:    "missing Proxmox VE privilege VM.Allocate on /vms/101 (grant a role holding it on that path to the connection's user or token): cannot clone VM pve/9000 to 101: not authorized to access endpoint: 403 Permission check failed (/vms/101, VM.Allocate)",
		},
		"AnyOfPrivileges": {
			reason:  "Several acceptable privileges are named as PVE lists them.",
			status:  403,
			message: "Permission check failed (/storage/local-lvm, Datastore.AllocateSpace|Datastore.Allocate)",
			want:    "missing Proxmox VE privilege Datastore.AllocateSpace|Datastore.Allocate on /storage/local-lvm",
		},
		"OtherForbidden": {
			reason:  "A 403 that names no privilege is left as it is.",
			status:  403,
			message: "URI '/nodes/pve/qemu/9000/clone' not available with API token, need proper ticket.",
			want:    "cannot clone VM pve/9000 to 101: not authorized to access endpoint: 403 URI '/nodes/pve/qemu/9000/clone' not available with API token, need proper ticket.",
		},
		"ServerError": {
			reason:  "Other statuses are left as they are.",
			status:  500,
			message: "can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout",
			want:    "cannot clone VM pve/9000 to 101: 500 can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{Method: "POST", PathPattern: "/nodes/*/qemu/*/clone", ErrorRate: 1, Status: tc.status, Message: tc.message}}})
			_, cloneErr := c.CloneGuest(context.Background(), ref, CloneOptions{NewID: 101})
			err := ExplainPermission(cloneErr)
			if err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
				t.Errorf("%s\n got %v\nwant prefix %q", tc.reason, err, tc.want)
			}
			if !errors.Is(err, cloneErr) {
				t.Errorf("the explained error lost its cause")
			}
		})
	}
}
