package pvesim_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Reserved snapshot names are refused before any task, with PVE's literal text:
//   - qemu-server src/PVE/API2/Qemu.pm, snapshot: `die "unable to use snapshot name 'current'
//     (reserved name)\n" if $snapname eq 'current'` and `die "unable to use snapshot name
//     'pending' (reserved name)\n" if lc($snapname) eq 'pending'`: 'pending' in any case, and
//     the message names 'pending' whatever case was sent;
//   - pve-container src/PVE/API2/LXC/Snapshot.pm, snapshot: 'current' and 'vzdump' exactly;
//     'pending' is no reserved name for a container.
func TestSnapshotReservedNamesAreReportedLiterally(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 720, Config: map[string]string{"name": "q"}}); err != nil {
		t.Fatal(err)
	}
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: 721, Config: map[string]string{"hostname": "c", "rootfs": "local-lvm:2"}}); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason, path, name string
		status             int
		message            string
	}{
		"QemuPendingUpper": {"lc($snapname) eq 'pending', message literal", "/nodes/pve/qemu/720/snapshot", "PENDING", http.StatusInternalServerError, "unable to use snapshot name 'pending' (reserved name)\n"},
		"QemuPendingMixed": {"lc($snapname) eq 'pending', message literal", "/nodes/pve/qemu/720/snapshot", "Pending", http.StatusInternalServerError, "unable to use snapshot name 'pending' (reserved name)\n"},
		"QemuCurrent":      {"$snapname eq 'current'", "/nodes/pve/qemu/720/snapshot", "current", http.StatusInternalServerError, "unable to use snapshot name 'current' (reserved name)\n"},
		"QemuCurrentUpper": {"'current' is compared as sent", "/nodes/pve/qemu/720/snapshot", "CURRENT", http.StatusOK, ""},
		"LxcVzdump":        {"$snapname eq 'vzdump'", "/nodes/pve/lxc/721/snapshot", "vzdump", http.StatusInternalServerError, "unable to use snapshot name 'vzdump' (reserved name)\n"},
		"LxcPending":       {"pve-container reserves no 'pending'", "/nodes/pve/lxc/721/snapshot", "pending", http.StatusOK, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := rawCall(t, sim, http.MethodPost, tc.path, "application/x-www-form-urlencoded", form("snapname", tc.name), tokenHeader())
			if res.Status != tc.status {
				t.Fatalf("%s: POST %s snapname=%s = %d %s, want %d", tc.reason, tc.path, tc.name, res.Status, res.Text, tc.status)
			}
			if tc.message != "" && res.message() != tc.message {
				t.Errorf("%s: message %q, want %q", tc.reason, res.message(), tc.message)
			}
		})
	}
}

// Every entry of a VM's snapshot list carries vmstate, 0 or 1, and the "current" entry none
// (qemu-server src/PVE/API2/Qemu.pm, snapshot_list: `vmstate => $d->{vmstate} ? 1 : 0`;
// the current item is built without it). A container's entries carry no vmstate
// (pve-container src/PVE/API2/LXC/Snapshot.pm, list).
func TestSnapshotListCarriesVMState(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 730, Running: true, Config: map[string]string{"name": "q"}}); err != nil {
		t.Fatal(err)
	}
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: 731, Config: map[string]string{"hostname": "c", "rootfs": "local-lvm:2"}}); err != nil {
		t.Fatal(err)
	}
	snapshot := func(path string, kv ...string) {
		t.Helper()
		upid := startTask(t, sim, http.MethodPost, path, form(kv...))
		eventually(t, "the snapshot task ends", func() bool {
			return getMap(t, sim, "/nodes/pve/tasks/"+url.PathEscape(upid)+"/status")["exitstatus"] == "OK"
		})
	}
	snapshot("/nodes/pve/qemu/730/snapshot", "snapname", "disks")
	snapshot("/nodes/pve/qemu/730/snapshot", "snapname", "withram", "vmstate", "1")
	snapshot("/nodes/pve/lxc/731/snapshot", "snapname", "ct")

	vmstates := func(path string) map[string]any {
		out := map[string]any{}
		for _, e := range getData(t, sim, path).([]any) {
			m := e.(map[string]any)
			v, ok := m["vmstate"]
			if !ok {
				v = "absent"
			}
			out[m["name"].(string)] = v
		}
		return out
	}
	want := map[string]any{"disks": float64(0), "withram": float64(1), "current": "absent"}
	if diff := cmp.Diff(want, vmstates("/nodes/pve/qemu/730/snapshot")); diff != "" {
		t.Errorf("VM snapshot list vmstate: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"ct": "absent", "current": "absent"}, vmstates("/nodes/pve/lxc/731/snapshot")); diff != "" {
		t.Errorf("container snapshot list vmstate: -want +got:\n%s", diff)
	}
}
