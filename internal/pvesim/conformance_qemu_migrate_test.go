package pvesim_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// seedGuests adds guests on node pve, failing the test on error.
func seedGuests(t *testing.T, sim *pvesim.Server, seeds ...pvesim.GuestSeed) {
	t.Helper()
	for _, s := range seeds {
		if s.Node == "" {
			s.Node = "pve"
		}
		if err := sim.AddGuest(s); err != nil {
			t.Fatal(err)
		}
	}
}

// migrateSim is a two-node cluster with a shared storage and short migrations.
func migrateSim(t *testing.T) *pvesim.Server {
	t.Helper()
	return startSim(t, pvesim.Options{Nodes: []string{"pve", "other"}, SharedStorage: "shared",
		TaskDurations: map[string]time.Duration{"qmigrate": 100 * time.Millisecond, "vzmigrate": 100 * time.Millisecond}})
}

// Source: qemu-server src/PVE/API2/Qemu.pm, migrate_vm: force, migration_type and
// migration_network each raise_param_exc({ <name> => "Only root may use this option." })
// when $authuser ne 'root@pam' (an API token, even root@pam's, is not root@pam).
func TestQemuMigrateRootOnlyParams(t *testing.T) {
	sim := migrateSim(t)
	seedGuests(t, sim, pvesim.GuestSeed{VMID: 610, Config: map[string]string{"name": "g", "scsi0": "shared:4"}})
	for _, p := range []struct{ name, value string }{{"force", "1"}, {"migration_type", "insecure"}, {"migration_network", "10.0.0.0/24"}} {
		t.Run(p.name, func(t *testing.T) {
			res := rawCall(t, sim, http.MethodPost, "/nodes/pve/qemu/610/migrate", "application/x-www-form-urlencoded",
				form("target", "other", p.name, p.value), tokenHeader())
			want := map[string]string{p.name: "Only root may use this option."}
			if res.Status != http.StatusBadRequest || cmp.Diff(want, res.errors()) != "" {
				t.Errorf("a token sending %s: %d %s, want 400 with errors %v", p.name, res.Status, res.Text, want)
			}
		})
	}
	t.Run("RootMayUseThem", func(t *testing.T) {
		c := passwordClient(t, sim)
		var upid string
		err := c.Post(testCtx(t), "/nodes/pve/qemu/610/migrate", map[string]string{"target": "other",
			"migration_type": "insecure", "migration_network": "10.0.0.0/24"}, &upid)
		if err != nil || !strings.HasPrefix(upid, "UPID:pve:") {
			t.Errorf("root@pam with migration_type and migration_network: %q, %v; want a task", upid, err)
		}
	})
}

// How a qmigrate task ends when the worker refuses. Sources: pve-guest-common
// src/PVE/AbstractMigrate.pm, migrate (any error: log('err', "migration aborted (duration
// ...): $err"), then die "migration aborted\n") and log/$msg2text (each line stamped
// "%F %H:%M:%S", "ERROR:" after the stamp for errors); qemu-server src/PVE/QemuMigrate.pm,
// prepare (before phase1, so no "starting migration" line: local devices without force,
// mapped devices that cannot move live), scan_local_volumes in phase1 (problems logged as
// warnings, then "Problem found while scanning volumes - can't migrate VM - check log") and
// phase1_cleanup ("aborting phase 1 - cleanup resources"); src/PVE/QemuMigrate/Helpers.pm,
// check_local_resources.
func TestQemuMigrateWorkerRefusals(t *testing.T) {
	sim := migrateSim(t)
	if err := sim.AddVolume("pve", "local:iso/debian.iso"); err != nil {
		t.Fatal(err)
	}
	vm := func(vmid int, running bool, extra ...string) pvesim.GuestSeed {
		cfg := map[string]string{"name": "g", "scsi0": "shared:4"}
		for i := 0; i+1 < len(extra); i += 2 {
			cfg[extra[i]] = extra[i+1]
		}
		return pvesim.GuestSeed{VMID: vmid, Running: running, Config: cfg}
	}
	seedGuests(t, sim,
		vm(620, true, "hostpci0", "0000:01:00.0"),
		vm(621, false, "usb0", "host=1234:5678", "serial0", "/dev/ttyS0"),
		vm(622, true, "hostpci0", "mapping=gpu"),
		vm(623, false, "ide2", "cdrom,media=cdrom"),
		vm(624, false, "ide2", "local:iso/debian.iso,media=cdrom"),
		vm(625, false, "usb0", "spice", "serial0", "socket"),
		vm(626, false, "hostpci0", "mapping=gpu"),
	)
	stamp := `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d `
	cases := map[string]struct {
		reason   string
		vmid     int
		params   string
		wantExit string
		wantLog  []string
		notLog   []string
	}{
		"PassedThroughPCI": {reason: "prepare: a local PCI device stops the migration before phase 1; only the abort line names it.",
			vmid: 620, params: "target=other&online=1", wantExit: "migration aborted",
			wantLog: []string{stamp + `ERROR: migration aborted \(duration 00:00:0\d\): can't migrate VM which uses local devices: hostpci0$`},
			notLog:  []string{"starting migration"}},
		"USBAndSerial": {reason: "check_local_resources: a host USB device and a serial device are local resources too (PVE lists them in hash order).",
			vmid: 621, params: "target=other", wantExit: "migration aborted",
			wantLog: []string{`can't migrate VM which uses local devices: (serial0, usb0|usb0, serial0)$`}},
		"MappedDeviceLive": {reason: "prepare: a running VM may not take a mapped device without live-migration-capable along.",
			vmid: 622, params: "target=other&online=1", wantExit: "migration aborted",
			wantLog: []string{`ERROR: migration aborted \(duration 00:00:0\d\): can't live migrate running VM which uses following mapped devices: hostpci0:gpu$`}},
		"HostCDROMDrive": {reason: "scan_local_volumes: the host's CD-ROM drive is logged as a problem and the scan fails phase 1.",
			vmid: 623, params: "target=other", wantExit: "migration aborted",
			wantLog: []string{stamp + `can't migrate local cdrom drive$`,
				stamp + `ERROR: Problem found while scanning volumes - can't migrate VM - check log$`,
				stamp + `aborting phase 1 - cleanup resources$`}},
		"LocalISO": {reason: "scan_local_volumes: a local ISO in a CD-ROM drive is found, then refused as a local cdrom image.",
			vmid: 624, params: "target=other", wantExit: "migration aborted",
			wantLog: []string{stamp + `found local disk 'local:iso/debian.iso' \(attached\)$`,
				stamp + `can't migrate local disk 'local:iso/debian.iso': local cdrom image$`}},
		"SpiceAndSocket": {reason: "check_local_resources: a SPICE USB port and a socket serial port move with the VM.",
			vmid: 625, params: "target=other", wantExit: "OK", wantLog: []string{"migration finished successfully"}},
		"MappedDeviceOffline": {reason: "check_local_resources: a mapped PCI device does not block an offline migration (its mapping exists on every node here).",
			vmid: 626, params: "target=other", wantExit: "OK", wantLog: []string{"migrating VM which uses mapped local devices"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := rawCall(t, sim, http.MethodPost, "/nodes/pve/qemu/"+strconv.Itoa(tc.vmid)+"/migrate",
				"application/x-www-form-urlencoded", tc.params, tokenHeader())
			upid := migrationTask(t, res, tc.reason)
			if st := awaitTask(t, sim, upid); st["exitstatus"] != tc.wantExit {
				t.Errorf("%s\nexit status %q, want %q", tc.reason, st["exitstatus"], tc.wantExit)
			}
			log := taskLogText(t, sim, upid)
			for _, re := range tc.wantLog {
				if !matchesLine(log, re) {
					t.Errorf("%s\ntask log %q has no line matching %q", tc.reason, log, re)
				}
			}
			for _, s := range tc.notLog {
				if strings.Contains(log, s) {
					t.Errorf("%s\ntask log %q has %q", tc.reason, log, s)
				}
			}
		})
	}
}

// Source: qemu-server src/PVE/QemuMigrate.pm, prepare: with force (root@pam only) local
// devices do not stop an offline migration ("migrating VM which uses local devices").
func TestQemuMigrateForceAsRoot(t *testing.T) {
	sim := migrateSim(t)
	seedGuests(t, sim, pvesim.GuestSeed{VMID: 630, Config: map[string]string{"name": "g", "scsi0": "shared:4", "hostpci0": "0000:01:00.0"}})
	var upid string
	if err := passwordClient(t, sim).Post(testCtx(t), "/nodes/pve/qemu/630/migrate",
		map[string]string{"target": "other", "force": "1"}, &upid); err != nil {
		t.Fatal(err)
	}
	if st := awaitTask(t, sim, upid); st["exitstatus"] != "OK" {
		t.Errorf("forced migration ended %q, want OK", st["exitstatus"])
	}
	if log := taskLogText(t, sim, upid); !strings.Contains(log, "migrating VM which uses local devices") {
		t.Errorf("task log %q lacks prepare's note on local devices", log)
	}
}

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
func TestQemuMigratePrecondition(t *testing.T) {
	sim := migrateSim(t)
	if err := sim.AddVolume("pve", "local:iso/debian.iso"); err != nil {
		t.Fatal(err)
	}
	seedGuests(t, sim,
		pvesim.GuestSeed{VMID: 640, Running: true, Config: map[string]string{"name": "g", "scsi0": "shared:4", "hostpci0": "0000:01:00.0", "usb0": "mapping=stick", "serial0": "socket"}},
		pvesim.GuestSeed{VMID: 641, Config: map[string]string{"name": "g", "scsi0": "local-lvm:4", "ide2": "local:iso/debian.iso,media=cdrom", "ide0": "none,media=cdrom"}},
		pvesim.GuestSeed{VMID: 642, HAManaged: true, Config: map[string]string{"name": "g", "scsi0": "shared:4", "hostpci0": "mapping=gpu"}},
		pvesim.GuestSeed{VMID: 643, Config: map[string]string{"name": "g", "scsi0": "shared:4", "lock": "backup"}},
	)
	disk641 := map[string]any{"volid": "local-lvm:vm-641-disk-0", "size": float64(4 << 30), "cdrom": float64(0), "is_cloudinit": float64(0),
		"replicate": float64(1), "shared": float64(0), "is_unused": float64(0), "is_attached": float64(1), "is_vmstate": float64(0),
		"is_tpmstate": float64(0), "drivename": "scsi0"}
	iso641 := map[string]any{"volid": "local:iso/debian.iso", "cdrom": float64(1), "is_cloudinit": float64(0),
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
			vmid: 640, want: common(map[string]any{"running": float64(1), "local_resources": []any{"hostpci0", "usb0"},
				"mapped-resources": []any{"usb0"}, "mapped-resource-info": map[string]any{"usb0": map[string]any{"name": "stick"}}})},
		"LocalDisksAndISO": {reason: "A local disk and a local ISO are listed with their attributes; an empty CD-ROM drive is not.",
			vmid: 641, want: common(map[string]any{"local_disks": []any{disk641, iso641}})},
		"HAWithMappedPCIStopped": {reason: "A stopped VM's mapped PCI device is mapped but not local; an HA resource gets dependent-ha-resources.",
			vmid: 642, want: common(map[string]any{"mapped-resources": []any{"hostpci0"},
				"mapped-resource-info": map[string]any{"hostpci0": map[string]any{"name": "gpu"}}, "dependent-ha-resources": []any{}})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkPrecondition(t, sim, "qemu", tc.vmid, "?target=other", tc.want, tc.reason)
		})
	}
	t.Run("Locked", func(t *testing.T) {
		res := rawCall(t, sim, http.MethodGet, "/nodes/pve/qemu/643/migrate", "", "", tokenHeader())
		if res.Status != http.StatusInternalServerError || strings.TrimSpace(res.message()) != "VM is locked (backup)" {
			t.Errorf("locked VM: %d %q, want 500 VM is locked (backup)", res.Status, res.message())
		}
	})
	t.Run("WrongNode", func(t *testing.T) {
		res := rawCall(t, sim, http.MethodGet, "/nodes/other/qemu/640/migrate", "", "", tokenHeader())
		if res.Status != http.StatusInternalServerError || !strings.Contains(res.message(), "does not exist") {
			t.Errorf("VM on another node: %d %q, want 500 Configuration file ... does not exist", res.Status, res.message())
		}
	})
}

// GET /nodes/{node}/lxc/{vmid}/migrate. Source: pve-container src/PVE/API2/LXC.pm,
// migrate_vm_precondition (added in pve-container 6, PVE 9): load_config and check_lock
// ("CT is locked (<lock>)"), running 0/1, allowed-nodes every other node, not-allowed-nodes
// only nodes blocked by HA resource-affinity rules (none without rules, so {}), and
// dependent-ha-resources for an HA resource. Dashed keys, unlike qemu-server's.
func TestLXCMigratePrecondition(t *testing.T) {
	sim := migrateSim(t)
	seedGuests(t, sim,
		pvesim.GuestSeed{Kind: pvesim.KindLXC, VMID: 650, Running: true, Config: map[string]string{"hostname": "ct", "rootfs": "local-lvm:2", "mp0": "/srv,mp=/srv"}},
		pvesim.GuestSeed{Kind: pvesim.KindLXC, VMID: 651, HAManaged: true, Config: map[string]string{"hostname": "ct", "rootfs": "shared:2"}},
		pvesim.GuestSeed{Kind: pvesim.KindLXC, VMID: 652, Config: map[string]string{"hostname": "ct", "rootfs": "shared:2", "lock": "backup"}},
	)
	cases := map[string]struct {
		reason string
		vmid   int
		want   map[string]any
	}{
		"Running": {reason: "A bind mount does not show here (the vzmigrate worker refuses it).",
			vmid: 650, want: map[string]any{"running": float64(1), "allowed-nodes": []any{"other"}, "not-allowed-nodes": map[string]any{}}},
		"HA": {reason: "An HA resource gets dependent-ha-resources.",
			vmid: 651, want: map[string]any{"running": float64(0), "allowed-nodes": []any{"other"}, "not-allowed-nodes": map[string]any{},
				"dependent-ha-resources": []any{}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkPrecondition(t, sim, "lxc", tc.vmid, "", tc.want, tc.reason)
		})
	}
	res := rawCall(t, sim, http.MethodGet, "/nodes/pve/lxc/652/migrate", "", "", tokenHeader())
	if res.Status != http.StatusInternalServerError || strings.TrimSpace(res.message()) != "CT is locked (backup)" {
		t.Errorf("locked CT: %d %q, want 500 CT is locked (backup)", res.Status, res.message())
	}
}

// checkPrecondition compares a guest's precondition answer with want, and its keys with
// PVE's schema.
func checkPrecondition(t *testing.T, sim *pvesim.Server, kind string, vmid int, query string, want map[string]any, reason string) {
	t.Helper()
	got := getMap(t, sim, "/nodes/pve/"+kind+"/"+strconv.Itoa(vmid)+"/migrate"+query)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s\nprecondition: -want, +got:\n%s", reason, diff)
	}
	checkReturnsSchema(t, "/nodes/{node}/"+kind+"/{vmid}/migrate", got)
}

// checkReturnsSchema checks an answer's keys against the GET method's returns in PVE's
// schema: every key is declared, every non-optional one present. It skips, as the route
// schema test does, without PVE_API_SCHEMA.
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
				Properties map[string]schemaProperty `json:"properties"`
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
		if _, ok := got[k]; !ok && p.required() {
			t.Errorf("GET %s lacks %q, which PVE's schema requires", path, k)
		}
	}
}

// matchesLine reports whether a line of the log matches the regular expression.
func matchesLine(log, expr string) bool {
	re := regexp.MustCompile(expr)
	for _, l := range strings.Split(log, "\n") {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}
