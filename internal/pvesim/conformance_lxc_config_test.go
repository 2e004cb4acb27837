package pvesim_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// PUT /nodes/{node}/lxc/{vmid}/config refuses to delete required options and to touch
// unprivileged, before it writes anything.
func TestLXCConfigRequiredAndReadOnlyOptions(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	seed := map[string]string{"hostname": "c", "rootfs": "local-lvm:2", "memory": "512", "ostype": "debian",
		"unprivileged": "1", "mp0": "local-lvm:1,mp=/data"}
	for vmid, extra := range map[int]map[string]string{300: nil, 301: {"protection": "1"}} {
		cfg := map[string]string{}
		for k, v := range seed {
			cfg[k] = v
		}
		for k, v := range extra {
			cfg[k] = v
		}
		if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: vmid, Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		reason  string
		vmid    int
		params  []string
		status  int
		message string // the 500's message, or the named parameter's error of a 400
		param   string
	}{
		// pve-container src/PVE/LXC/Config.pm, update_pct_config: memory, rootfs and ostype
		// "unable to delete required option '$opt'\n".
		{"rootfs is required", 300, []string{"delete", "rootfs"}, 500, "unable to delete required option 'rootfs'\n", ""},
		{"memory is required", 300, []string{"delete", "memory"}, 500, "unable to delete required option 'memory'\n", ""},
		{"ostype is required", 300, []string{"delete", "ostype"}, 500, "unable to delete required option 'ostype'\n", ""},
		{"the first refused delete wins", 300, []string{"delete", "tags,memory,rootfs"}, 500, "unable to delete required option 'memory'\n", ""},
		// pve-container src/PVE/LXC/Config.pm, update_pct_config: "unable to delete read-only option: '$opt'\n".
		{"unprivileged cannot be deleted", 300, []string{"delete", "unprivileged"}, 500, "unable to delete read-only option: 'unprivileged'\n", ""},
		// pve-container src/PVE/LXC/Config.pm, update_pct_config: "unable to modify read-only option: '$opt'\n"
		// (src/PVE/API2/LXC.pm, create_vm: "'unprivileged' is read-only, so we can't pass it to update_pct_config").
		{"unprivileged cannot change", 300, []string{"unprivileged", "0"}, 500, "unable to modify read-only option: 'unprivileged'\n", ""},
		{"unprivileged cannot be set to its value either", 300, []string{"unprivileged", "1"}, 500, "unable to modify read-only option: 'unprivileged'\n", ""},
		// pve-guest-common src/PVE/AbstractConfig.pm, check_protection: "$err_msg - protection mode enabled\n",
		// from pve-container src/PVE/LXC/Config.pm, update_pct_config's mpN delete.
		{"a protected CT keeps its mount points", 301, []string{"delete", "mp0"}, 500, "can't remove CT 301 drive 'mp0' - protection mode enabled\n", ""},
		// pve-container src/PVE/LXC/Config.pm, update_pct_config, $check_content_type:
		// "storage '$sid' does not allow content type 'rootdir' (Container)\n".
		{"a mount point needs a rootdir storage", 300, []string{"mp1", "local:1,mp=/srv"}, 500, "storage 'local' does not allow content type 'rootdir' (Container)\n", ""},
		// pve-container src/PVE/API2/LXC/Config.pm, update_vm: no skiplock parameter
		// (additionalProperties => 0); pve-common src/PVE/JSONSchema.pm, validate.
		{"config has no skiplock", 300, []string{"skiplock", "1", "memory", "256"}, 400,
			"property is not defined in schema and the schema does not allow additional properties", "skiplock"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			before, _ := sim.Guest(tc.vmid)
			res := rawCall(t, sim, http.MethodPut, "/nodes/pve/lxc/"+strconv.Itoa(tc.vmid)+"/config", "application/x-www-form-urlencoded", form(tc.params...), tokenHeader())
			got := res.message()
			if tc.param != "" {
				got = res.errors()[tc.param]
			}
			if res.Status != tc.status || got != tc.message {
				t.Errorf("%s: PUT config %v = %d %q, want %d %q", tc.reason, tc.params, res.Status, got, tc.status, tc.message)
			}
			after, _ := sim.Guest(tc.vmid)
			if diff := cmp.Diff(before.Config, after.Config); diff != "" {
				t.Errorf("%s: a refused PUT must not change the config (-before +after):\n%s", tc.reason, diff)
			}
		})
	}

	// pve-container src/PVE/LXC/Config.pm, update_pct_config: a key set neither in the
	// config nor pending is skipped with a warning (before the required check), so the PUT succeeds.
	res := rawCall(t, sim, http.MethodPut, "/nodes/pve/lxc/300/config", "application/x-www-form-urlencoded", form("delete", "swap,tags", "hostname", "c2"), tokenHeader())
	if g, _ := sim.Guest(300); res.Status != http.StatusOK || g.Config["hostname"] != "c2" {
		t.Errorf("deleting unset keys: %d %q, hostname %q", res.Status, res.message(), g.Config["hostname"])
	}
}

// skiplock is a parameter of start and stop only, and for root@pam only.
func TestLXCSkiplockIsRootOnly(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	for vmid, running := range map[int]bool{310: false, 311: true} {
		if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: vmid, Running: running,
			Config: map[string]string{"hostname": "s", "rootfs": "local-lvm:2", "lock": "backup"}}); err != nil {
			t.Fatal(err)
		}
	}
	const notInSchema = "property is not defined in schema and the schema does not allow additional properties"
	cases := []struct {
		reason, method, path, message string
	}{
		// pve-container src/PVE/API2/LXC/Status.pm, vm_start: raise_param_exc({ skiplock =>
		// "Only root may use this option." }) if $skiplock && $authuser ne 'root@pam' (a token is not root@pam).
		{"start with skiplock as a token", http.MethodPost, "/nodes/pve/lxc/310/status/start", "Only root may use this option."},
		// pve-container src/PVE/API2/LXC/Status.pm, vm_stop: the same check.
		{"stop with skiplock as a token", http.MethodPost, "/nodes/pve/lxc/311/status/stop", "Only root may use this option."},
		// pve-container src/PVE/API2/LXC.pm, destroy_vm and src/PVE/API2/LXC/Status.pm, vm_shutdown:
		// no skiplock parameter (additionalProperties => 0).
		{"destroy has no skiplock", http.MethodDelete, "/nodes/pve/lxc/310?skiplock=1", notInSchema},
		{"shutdown has no skiplock", http.MethodPost, "/nodes/pve/lxc/311/status/shutdown", notInSchema},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			body, ctype := form("skiplock", "1"), "application/x-www-form-urlencoded"
			if tc.method == http.MethodDelete {
				body, ctype = "", ""
			}
			res := rawCall(t, sim, tc.method, tc.path, ctype, body, tokenHeader())
			if res.Status != http.StatusBadRequest || res.errors()["skiplock"] != tc.message {
				t.Errorf("%s: %d %s, want 400 with errors.skiplock %q", tc.reason, res.Status, res.Text, tc.message)
			}
		})
	}

	// root@pam itself may: pve-container src/PVE/API2/LXC/Status.pm, vm_start's worker skips
	// check_lock when $skiplock is set.
	ctx := testCtx(t)
	c := passwordClient(t, sim)
	var upid string
	if err := c.Post(ctx, "/nodes/pve/lxc/310/status/start", map[string]any{"skiplock": 1}, &upid); err != nil {
		t.Fatalf("start with skiplock as root@pam: %v", err)
	}
	mustWait(t, c, "start with skiplock", proxmox.NewTask(proxmox.UPID(upid), c), nil)
	if g, _ := sim.Guest(310); g.Status != "running" {
		t.Errorf("root@pam's skiplock start: status %q", g.Status)
	}
}

// The power handlers only ask check_running before they fork, with pve-container's own
// words: "CT <vmid> not running", but "VM <vmid> not running" for reboot.
func TestLXCPowerRefusals(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: 320,
		Config: map[string]string{"hostname": "p", "rootfs": "local-lvm:2"}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		reason, path, message string
	}{
		// pve-container src/PVE/API2/LXC/Status.pm, vm_stop: die "CT $vmid not running\n".
		{"stop of a stopped CT", "/nodes/pve/lxc/320/status/stop", "CT 320 not running\n"},
		// pve-container src/PVE/API2/LXC/Status.pm, vm_shutdown: die "CT $vmid not running\n".
		{"shutdown of a stopped CT", "/nodes/pve/lxc/320/status/shutdown", "CT 320 not running\n"},
		// pve-container src/PVE/API2/LXC/Status.pm, vm_reboot: die "VM $vmid not running\n".
		{"reboot of a stopped CT says VM", "/nodes/pve/lxc/320/status/reboot", "VM 320 not running\n"},
		// The handlers load no config first: a CT that does not exist is just not running.
		{"stop of a missing CT", "/nodes/pve/lxc/329/status/stop", "CT 329 not running\n"},
		{"reboot of a missing CT", "/nodes/pve/lxc/329/status/reboot", "VM 329 not running\n"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			res := rawCall(t, sim, http.MethodPost, tc.path, "", "", tokenHeader())
			if res.Status != http.StatusInternalServerError || res.message() != tc.message {
				t.Errorf("%s: %d %q, want 500 %q", tc.reason, res.Status, res.message(), tc.message)
			}
		})
	}

	// pve-container src/PVE/API2/LXC.pm, ip (GET interfaces) returns PVE::LXC::get_interfaces,
	// which returns nothing when find_lxc_pid dies (src/PVE/LXC.pm): data null, not an error,
	// for a stopped CT and for one that is not there.
	for _, vmid := range []string{"320", "329"} {
		res := rawCall(t, sim, http.MethodGet, "/nodes/pve/lxc/"+vmid+"/interfaces", "", "", tokenHeader())
		if res.Status != http.StatusOK || string(res.Body["data"]) != "null" {
			t.Errorf("interfaces of CT %s (not running): %d %s, want 200 with data null", vmid, res.Status, res.Text)
		}
	}

	// pve-container src/PVE/API2/LXC/Status.pm, vm_start: only check_running before the fork;
	// the vzstart worker's load_config fails (pve-guest-common src/PVE/AbstractConfig.pm, load_config).
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	task, err := c.NodeRef("pve").ContainerRef(329).Start(ctx)
	if err != nil {
		t.Fatalf("start of a missing CT is no request error: %v", err)
	}
	if err := waitTask(t, c, task); err == nil || !strings.Contains(err.Error(), "Configuration file 'nodes/pve/lxc/329.conf' does not exist") {
		t.Errorf("start of a missing CT: %v", err)
	}
}

// pve-container src/PVE/LXC.pm, vm_reboot checks no lock: it stops the container and
// vm_start runs systemctl, whose prestart hook (src/lxc-pve-prestart-hook) dies on the
// lock, so the task fails with run_command's message and the container stays stopped.
func TestLXCRebootOfALockedCT(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: 330, Running: true,
		Config: map[string]string{"hostname": "r", "rootfs": "local-lvm:2", "lock": "backup"}}); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	task, err := c.NodeRef("pve").ContainerRef(330).Reboot(ctx)
	if err != nil {
		t.Fatalf("reboot request: %v", err)
	}
	want := "command 'systemctl start pve-container@330' failed: exit code 1"
	if err := waitTask(t, c, task); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("reboot of a locked CT: %v, want %q", err, want)
	}
	if g, _ := sim.Guest(330); g.Status != "stopped" {
		t.Errorf("after the failed reboot: %q, want stopped", g.Status)
	}
}
