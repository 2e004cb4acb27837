package pveconformance

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// migrateSimOptions is a two-node cluster with a shared storage and short migrations.
var migrateSimOptions = pvesim.Options{Nodes: []string{simNode, "other"}, SharedStorage: "shared",
	TaskDurations: map[string]time.Duration{"qmigrate": 100 * time.Millisecond, "vzmigrate": 100 * time.Millisecond}}

// seedGuest stages a guest of a fresh VMID on the simulator's node (cfg as
// its config) and returns the VMID.
func (c *tcase) seedGuest(sim *pvesim.Server, seed pvesim.GuestSeed) int {
	c.t.Helper()
	seed.Node, seed.VMID = c.Node(), c.vmid()
	if err := sim.AddGuest(seed); err != nil {
		c.t.Fatal(err)
	}
	return seed.VMID
}

// Source: qemu-server src/PVE/API2/Qemu.pm, migrate_vm: force, migration_type and
// migration_network each raise_param_exc({ <name> => "Only root may use this option." })
// when $authuser ne 'root@pam' (an API token, even root@pam's, is not root@pam).
func TestQemuMigrateRootOnlyParams(t *testing.T) {
	tg := target(t, migrateSimOptions)
	to := tg.migrateTarget()
	if tg.Config().TokenID == "" {
		t.Skip("needs an API token: the refusal is for anyone but root@pam")
	}
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/migrate target force")
	id := tg.createVM("rootonly")
	for _, p := range []struct{ name, value string }{{"force", "1"}, {"migration_type", "insecure"}, {"migration_network", "10.0.0.0/24"}} {
		t.Run(p.name, func(t *testing.T) {
			tg := tg.in(t)
			res := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/migrate"), Params("target", to, p.name, p.value))
			want := map[string]string{p.name: "Only root may use this option."}
			if res.Status != http.StatusBadRequest || cmp.Diff(want, res.Errors()) != "" {
				t.Errorf("a token sending %s: %s %s, want 400 with errors %v", p.name, res.StatusLine, res.Text, want)
			}
		})
	}
	t.Run("RootMayUseThem", func(t *testing.T) {
		tg := tg.in(t)
		sim := tg.requireSim("an insecure migration over a named network is not for a cluster someone cares about")
		vm := tg.seedGuest(sim, pvesim.GuestSeed{Config: map[string]string{"name": "g", "scsi0": "shared:4"}})
		cl, err := tg.PasswordClient()
		if err != nil {
			t.Fatal(err)
		}
		var upid string
		err = cl.Post(tg.ctx(), tg.guestPath("qemu", vm, "/migrate"), map[string]string{"target": to,
			"migration_type": "insecure", "migration_network": "10.0.0.0/24"}, &upid)
		if err != nil || !strings.HasPrefix(upid, "UPID:"+tg.Node()+":") {
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
	tg := target(t, migrateSimOptions)
	sim := tg.requireSim("needs guests with host devices, device mappings and a host CD-ROM drive")
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/migrate target online")
	iso := tg.ContentStorage() + ":iso/" + Prefix + "debian.iso"
	if err := sim.AddVolume(tg.Node(), iso); err != nil {
		t.Fatal(err)
	}
	vm := func(running bool, extra ...string) int {
		cfg := map[string]string{"name": "g", "scsi0": "shared:4"}
		for i := 0; i+1 < len(extra); i += 2 {
			cfg[extra[i]] = extra[i+1]
		}
		return tg.seedGuest(sim, pvesim.GuestSeed{Running: running, Config: cfg})
	}
	stamp := `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d `
	isoRE := regexp.QuoteMeta(iso)
	cases := map[string]struct {
		reason   string
		vmid     int
		online   bool
		wantExit string
		wantLog  []string
		notLog   []string
	}{
		"PassedThroughPCI": {reason: "prepare: a local PCI device stops the migration before phase 1; only the abort line names it.",
			vmid: vm(true, "hostpci0", "0000:01:00.0"), online: true, wantExit: "migration aborted",
			wantLog: []string{stamp + `ERROR: migration aborted \(duration 00:00:0\d\): can't migrate VM which uses local devices: hostpci0$`},
			notLog:  []string{"starting migration"}},
		"USBAndSerial": {reason: "check_local_resources: a host USB device and a serial device are local resources too (PVE lists them in hash order).",
			vmid: vm(false, "usb0", "host=1234:5678", "serial0", "/dev/ttyS0"), wantExit: "migration aborted",
			wantLog: []string{`can't migrate VM which uses local devices: (serial0, usb0|usb0, serial0)$`}},
		"MappedDeviceLive": {reason: "prepare: a running VM may not take a mapped device without live-migration-capable along.",
			vmid: vm(true, "hostpci0", "mapping=gpu"), online: true, wantExit: "migration aborted",
			wantLog: []string{`ERROR: migration aborted \(duration 00:00:0\d\): can't live migrate running VM which uses following mapped devices: hostpci0:gpu$`}},
		"HostCDROMDrive": {reason: "scan_local_volumes: the host's CD-ROM drive is logged as a problem and the scan fails phase 1.",
			vmid: vm(false, "ide2", "cdrom,media=cdrom"), wantExit: "migration aborted",
			wantLog: []string{stamp + `can't migrate local cdrom drive$`,
				stamp + `ERROR: Problem found while scanning volumes - can't migrate VM - check log$`,
				stamp + `aborting phase 1 - cleanup resources$`}},
		"LocalISO": {reason: "scan_local_volumes: a local ISO in a CD-ROM drive is found, then refused as a local cdrom image.",
			vmid: vm(false, "ide2", iso+",media=cdrom"), wantExit: "migration aborted",
			wantLog: []string{stamp + `found local disk '` + isoRE + `' \(attached\)$`,
				stamp + `can't migrate local disk '` + isoRE + `': local cdrom image$`}},
		"SpiceAndSocket": {reason: "check_local_resources: a SPICE USB port and a socket serial port move with the VM.",
			vmid: vm(false, "usb0", "spice", "serial0", "socket"), wantExit: "OK", wantLog: []string{"migration finished successfully"}},
		"MappedDeviceOffline": {reason: "check_local_resources: a mapped PCI device does not block an offline migration (its mapping exists on every node here).",
			vmid: vm(false, "hostpci0", "mapping=gpu"), wantExit: "OK", wantLog: []string{"migrating VM which uses mapped local devices"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := tg.in(t)
			params := Params("target", "other")
			if tc.online {
				params.Set("online", "1")
			}
			res := tg.raw(http.MethodPost, tg.guestPath("qemu", tc.vmid, "/migrate"), params)
			if res.Status != http.StatusOK {
				t.Fatalf("%s\nmigrate: %s %s", tc.reason, res.StatusLine, res.Text)
			}
			if exit := tg.task(res.UPID()); exit != tc.wantExit {
				t.Errorf("%s\nexit status %q, want %q", tc.reason, exit, tc.wantExit)
			}
			log := tg.taskLog(res.UPID())
			for _, re := range tc.wantLog {
				if !matchesLine(log, re) {
					t.Errorf("%s\ntask log %q has no line matching %q", tc.reason, log, re)
				}
			}
			for _, s := range tc.notLog {
				if logHas(log, s) {
					t.Errorf("%s\ntask log %q has %q", tc.reason, log, s)
				}
			}
		})
	}
}

// Source: qemu-server src/PVE/QemuMigrate.pm, prepare: with force (root@pam only) local
// devices do not stop an offline migration ("migrating VM which uses local devices").
func TestQemuMigrateForceAsRoot(t *testing.T) {
	tg := target(t, migrateSimOptions)
	sim := tg.requireSim("needs a guest with a passed-through PCI device")
	id := tg.seedGuest(sim, pvesim.GuestSeed{Config: map[string]string{"name": "g", "scsi0": "shared:4", "hostpci0": "0000:01:00.0"}})
	cl, err := tg.PasswordClient()
	if err != nil {
		t.Fatal(err)
	}
	var upid string
	if err := cl.Post(tg.ctx(), tg.guestPath("qemu", id, "/migrate"), map[string]string{"target": "other", "force": "1"}, &upid); err != nil {
		t.Fatal(err)
	}
	if exit := tg.task(upid); exit != "OK" {
		t.Errorf("forced migration ended %q, want OK", exit)
	}
	if log := tg.taskLog(upid); !logHas(log, "migrating VM which uses local devices") {
		t.Errorf("task log %q lacks prepare's note on local devices", log)
	}
}

// matchesLine reports whether a line of the log matches the regular expression.
func matchesLine(log []string, expr string) bool {
	re := regexp.MustCompile(expr)
	for _, l := range log {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}
