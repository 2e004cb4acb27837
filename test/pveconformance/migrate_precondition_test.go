package pveconformance

import (
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// GET /nodes/{node}/qemu/{vmid}/migrate. Source: qemu-server src/PVE/API2/Qemu.pm,
// migrate_vm_precondition: load_config and check_lock first ("VM is locked (<lock>)");
// running as 0/1; allowed_nodes every other node whose storages are all available;
// not_allowed_nodes one entry per other node, an empty one ({}) for an allowed node (the
// API copies check_local_storage_availability's per-node hash, always defined, before
// testing it); local_disks from $check_vm_disks_local (foreach_volid's attributes, volid
// added; shared storages and empty CD-ROM drives left out); local_resources from
// PVE::QemuMigrate::Helpers::check_local_resources($vmconf, running, 1);
// mapped-resources its mapped keys sorted, mapped-resource-info name (and live-migration)
// per key; has-dbus-vmstate 1; dependent-ha-resources only for an HA resource
// (PVE::HA::Config::get_resource_motion_info, [] without affinity rules).
func TestQemuMigratePreconditionStaged(t *testing.T) {
	tg := target(t, migrateSimOptions)
	sim := tg.requireSim("needs guests with host devices, device mappings, HA and a backup lock")
	covers(tg, "GET /nodes/{node}/qemu/{vmid}/migrate target")
	iso := tg.ContentStorage() + ":iso/" + Prefix + "debian.iso"
	if err := sim.AddVolume(tg.Node(), iso); err != nil {
		t.Fatal(err)
	}
	devices := tg.seedGuest(sim, pvesim.GuestSeed{Running: true, Config: map[string]string{"name": "g", "scsi0": "shared:4",
		"hostpci0": "0000:01:00.0", "usb0": "mapping=stick", "serial0": "socket"}})
	disks := tg.seedGuest(sim, pvesim.GuestSeed{Config: map[string]string{"name": "g", "scsi0": tg.Storage() + ":4",
		"ide2": iso + ",media=cdrom", "ide0": "none,media=cdrom"}})
	ha := tg.seedGuest(sim, pvesim.GuestSeed{HAManaged: true, Config: map[string]string{"name": "g", "scsi0": "shared:4", "hostpci0": "mapping=gpu"}})
	locked := tg.seedGuest(sim, pvesim.GuestSeed{Config: map[string]string{"name": "g", "scsi0": "shared:4", "lock": "backup"}})
	disk := map[string]any{"volid": tg.Storage() + ":vm-" + strconv.Itoa(disks) + "-disk-0", "size": float64(4 << 30), "cdrom": float64(0), "is_cloudinit": float64(0),
		"replicate": float64(1), "shared": float64(0), "is_unused": float64(0), "is_attached": float64(1), "is_vmstate": float64(0),
		"is_tpmstate": float64(0), "drivename": "scsi0"}
	isoDisk := map[string]any{"volid": iso, "cdrom": float64(1), "is_cloudinit": float64(0),
		"replicate": float64(1), "shared": float64(0), "is_unused": float64(0), "is_attached": float64(1), "is_vmstate": float64(0),
		"is_tpmstate": float64(0), "drivename": "ide2"}
	common := func(extra map[string]any) map[string]any {
		out := map[string]any{"allowed_nodes": []any{"other"}, "not_allowed_nodes": map[string]any{"other": map[string]any{}},
			"has-dbus-vmstate": float64(1), "local_disks": []any{}, "local_resources": []any{}, "mapped-resources": []any{},
			"mapped-resource-info": map[string]any{}, "running": float64(0)}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	cases := map[string]struct {
		reason string
		vmid   int
		want   map[string]any
	}{
		"RunningWithDevices": {reason: "A passed-through PCI device is local; a mapped USB device is local and mapped; a socket serial port is neither.",
			vmid: devices, want: common(map[string]any{"running": float64(1), "local_resources": []any{"hostpci0", "usb0"},
				"mapped-resources": []any{"usb0"}, "mapped-resource-info": map[string]any{"usb0": map[string]any{"name": "stick"}}})},
		"LocalDisksAndISO": {reason: "A local disk and a local ISO are listed with their attributes; an empty CD-ROM drive is not.",
			vmid: disks, want: common(map[string]any{"local_disks": []any{disk, isoDisk}})},
		"HAWithMappedPCIStopped": {reason: "A stopped VM's mapped PCI device is mapped but not local; an HA resource gets dependent-ha-resources.",
			vmid: ha, want: common(map[string]any{"mapped-resources": []any{"hostpci0"},
				"mapped-resource-info": map[string]any{"hostpci0": map[string]any{"name": "gpu"}}, "dependent-ha-resources": []any{}})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := tg.in(t)
			tg.checkPrecondition("qemu", tc.vmid, true, tc.want, tc.reason)
		})
	}
	t.Run("Locked", func(t *testing.T) {
		tg := tg.in(t)
		res := tg.raw(http.MethodGet, tg.guestPath("qemu", locked, "/migrate"), nil)
		if res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != "VM is locked (backup)" {
			t.Errorf("locked VM: %s %q, want 500 VM is locked (backup)", res.StatusLine, res.Message())
		}
	})
	t.Run("WrongNode", func(t *testing.T) {
		tg := tg.in(t)
		res := tg.raw(http.MethodGet, "/nodes/other/qemu/"+strconv.Itoa(devices)+"/migrate", nil)
		if res.Status != http.StatusInternalServerError || !strings.Contains(res.Message(), "does not exist") {
			t.Errorf("VM on another node: %s %q, want 500 Configuration file ... does not exist", res.StatusLine, res.Message())
		}
	})
}

// GET /nodes/{node}/lxc/{vmid}/migrate. Source: pve-container src/PVE/API2/LXC.pm,
// migrate_vm_precondition (added in pve-container 6, PVE 9): load_config and check_lock
// ("CT is locked (<lock>)"), running 0/1, allowed-nodes every other node, not-allowed-nodes
// only nodes blocked by HA resource-affinity rules (none without rules, so {}), and
// dependent-ha-resources for an HA resource. Dashed keys, unlike qemu-server's.
func TestLXCMigratePreconditionStaged(t *testing.T) {
	tg := target(t, migrateSimOptions)
	sim := tg.requireSim("needs a bind mount, an HA resource and a backup lock")
	covers(tg, "GET /nodes/{node}/lxc/{vmid}/migrate")
	running := tg.seedGuest(sim, pvesim.GuestSeed{Kind: pvesim.KindLXC, Running: true, Config: map[string]string{"hostname": "ct", "rootfs": tg.Storage() + ":2", "mp0": "/srv,mp=/srv"}})
	ha := tg.seedGuest(sim, pvesim.GuestSeed{Kind: pvesim.KindLXC, HAManaged: true, Config: map[string]string{"hostname": "ct", "rootfs": "shared:2"}})
	locked := tg.seedGuest(sim, pvesim.GuestSeed{Kind: pvesim.KindLXC, Config: map[string]string{"hostname": "ct", "rootfs": "shared:2", "lock": "backup"}})
	cases := map[string]struct {
		reason string
		vmid   int
		want   map[string]any
	}{
		"Running": {reason: "A bind mount does not show here (the vzmigrate worker refuses it).",
			vmid: running, want: map[string]any{"running": float64(1), "allowed-nodes": []any{"other"}, "not-allowed-nodes": map[string]any{}}},
		"HA": {reason: "An HA resource gets dependent-ha-resources.",
			vmid: ha, want: map[string]any{"running": float64(0), "allowed-nodes": []any{"other"}, "not-allowed-nodes": map[string]any{},
				"dependent-ha-resources": []any{}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := tg.in(t)
			tg.checkPrecondition("lxc", tc.vmid, false, tc.want, tc.reason)
		})
	}
	res := tg.raw(http.MethodGet, tg.guestPath("lxc", locked, "/migrate"), nil)
	if res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != "CT is locked (backup)" {
		t.Errorf("locked CT: %s %q, want 500 CT is locked (backup)", res.StatusLine, res.Message())
	}
}

// checkPrecondition compares a guest's precondition answer with want, and its keys with
// PVE's schema.
func (c *tcase) checkPrecondition(kind string, vmid int, withTarget bool, want map[string]any, reason string) {
	c.t.Helper()
	var params map[string][]string
	if withTarget {
		params = Params("target", "other")
	}
	var got map[string]any
	c.data(c.guestPath(kind, vmid, "/migrate"), params, &got)
	if diff := cmp.Diff(want, got); diff != "" {
		c.t.Errorf("%s\nprecondition: -want, +got:\n%s", reason, diff)
	}
	checkReturnsSchema(c.t, "/nodes/{node}/"+kind+"/{vmid}/migrate", got)
}

// checkReturnsSchema checks an answer's keys against the GET method's returns in PVE's
// schema: every key is declared, every non-optional one present. Without
// PVE_API_SCHEMA it only says so.
func checkReturnsSchema(t *testing.T, path string, got map[string]any) {
	t.Helper()
	file := os.Getenv("PVE_API_SCHEMA")
	if file == "" {
		t.Log("PVE_API_SCHEMA is not set: the answer's keys are not checked against PVE's schema")
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read schema %s: %v", file, err)
	}
	type node struct {
		Path string `json:"path"`
		Info map[string]struct {
			Returns struct {
				Properties map[string]struct {
					Optional any `json:"optional"`
				} `json:"properties"`
			} `json:"returns"`
		} `json:"info"`
		Children []node `json:"children"`
	}
	var roots []node
	if err := json.Unmarshal(b, &roots); err != nil {
		t.Fatal(err)
	}
	var find func([]node) *node
	find = func(ns []node) *node {
		for i := range ns {
			if ns[i].Path == path {
				return &ns[i]
			}
			if n := find(ns[i].Children); n != nil {
				return n
			}
		}
		return nil
	}
	n := find(roots)
	if n == nil {
		t.Fatalf("%s not in the PVE schema", path)
	}
	props := n.Info[http.MethodGet].Returns.Properties
	for k := range got {
		if _, ok := props[k]; !ok {
			t.Errorf("GET %s answers %q, which PVE's schema does not declare", path, k)
		}
	}
	for k, p := range props {
		if _, ok := got[k]; !ok && !optional(p.Optional) {
			t.Errorf("GET %s lacks %q, which PVE's schema requires", path, k)
		}
	}
}

// optional reads a schema's "optional", which PVE prints as 1, "1" or true.
func optional(v any) bool {
	switch v := v.(type) {
	case float64:
		return v != 0
	case bool:
		return v
	case string:
		return v != "0" && v != ""
	}
	return false
}
