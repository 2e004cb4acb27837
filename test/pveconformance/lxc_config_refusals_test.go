package pveconformance

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// PUT /nodes/{node}/lxc/{vmid}/config refuses to delete required options and to touch
// unprivileged, before it writes anything.
func TestLXCConfigRequiredAndReadOnlyOptions(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "PUT /nodes/{node}/lxc/{vmid}/config delete memory hostname mp[n]")
	plain := tg.createCT("required", "ostype", "debian", "mp0", tg.Storage()+":1,mp=/data")
	protected := tg.createCT("protected", "ostype", "debian", "mp0", tg.Storage()+":1,mp=/data", "protection", "1")
	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		_, _ = tg.Raw(ctx, http.MethodPut, tg.guestPath("lxc", protected, "/config"), Params("delete", "protection"))
	})
	p, pp := strconv.Itoa(plain), strconv.Itoa(protected)
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
		{"rootfs is required", plain, []string{"delete", "rootfs"}, 500, "unable to delete required option 'rootfs'\n", ""},
		{"memory is required", plain, []string{"delete", "memory"}, 500, "unable to delete required option 'memory'\n", ""},
		{"ostype is required", plain, []string{"delete", "ostype"}, 500, "unable to delete required option 'ostype'\n", ""},
		{"the first refused delete wins", plain, []string{"delete", "tags,memory,rootfs"}, 500, "unable to delete required option 'memory'\n", ""},
		// pve-container src/PVE/LXC/Config.pm, update_pct_config: "unable to delete read-only option: '$opt'\n".
		{"unprivileged cannot be deleted", plain, []string{"delete", "unprivileged"}, 500, "unable to delete read-only option: 'unprivileged'\n", ""},
		// pve-container src/PVE/LXC/Config.pm, update_pct_config: "unable to modify read-only option: '$opt'\n"
		// (src/PVE/API2/LXC.pm, create_vm: "'unprivileged' is read-only, so we can't pass it to update_pct_config").
		{"unprivileged cannot change", plain, []string{"unprivileged", "0"}, 500, "unable to modify read-only option: 'unprivileged'\n", ""},
		{"unprivileged cannot be set to its value either", plain, []string{"unprivileged", "1"}, 500, "unable to modify read-only option: 'unprivileged'\n", ""},
		// pve-guest-common src/PVE/AbstractConfig.pm, check_protection: "$err_msg - protection mode enabled\n",
		// from pve-container src/PVE/LXC/Config.pm, update_pct_config's mpN delete.
		{"a protected CT keeps its mount points", protected, []string{"delete", "mp0"}, 500, "can't remove CT " + pp + " drive 'mp0' - protection mode enabled\n", ""},
		// pve-container src/PVE/LXC/Config.pm, update_pct_config, $check_content_type:
		// "storage '$sid' does not allow content type 'rootdir' (Container)\n" (the
		// content storage holds iso and vztmpl; a real one must not allow rootdir).
		{"a mount point needs a rootdir storage", plain, []string{"mp1", tg.ContentStorage() + ":1,mp=/srv"}, 500,
			"storage '" + tg.ContentStorage() + "' does not allow content type 'rootdir' (Container)\n", ""},
		// pve-container src/PVE/API2/LXC/Config.pm, update_vm: no skiplock parameter
		// (additionalProperties => 0); pve-common src/PVE/JSONSchema.pm, validate.
		{"config has no skiplock", plain, []string{"skiplock", "1", "memory", "256"}, 400,
			"property is not defined in schema and the schema does not allow additional properties", "skiplock"},
	}
	config := func(vmid int) map[string]any {
		var cfg map[string]any
		tg.data(tg.guestPath("lxc", vmid, "/config"), nil, &cfg)
		return cfg
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			tg := tg.in(t)
			before := config(tc.vmid)
			res := tg.raw(http.MethodPut, tg.guestPath("lxc", tc.vmid, "/config"), Params(tc.params...))
			got := res.Message()
			if tc.param != "" {
				got = res.Errors()[tc.param]
			}
			if res.Status != tc.status || got != tc.message {
				t.Errorf("%s: PUT config %v = %s %q, want %d %q", tc.reason, tc.params, res.StatusLine, got, tc.status, tc.message)
			}
			if diff := cmp.Diff(before, config(tc.vmid)); diff != "" {
				t.Errorf("%s: a refused PUT must not change the config (-before +after):\n%s", tc.reason, diff)
			}
		})
	}

	// pve-container src/PVE/LXC/Config.pm, update_pct_config: a key set neither in the
	// config nor pending is skipped with a warning (before the required check), so the PUT succeeds.
	res := tg.raw(http.MethodPut, tg.guestPath("lxc", plain, "/config"), Params("delete", "swap,tags", "hostname", tg.GuestName("required2")))
	if h := config(plain)["hostname"]; res.Status != http.StatusOK || h != tg.GuestName("required2") {
		t.Errorf("deleting unset keys on %s: %s %q, hostname %v", p, res.StatusLine, res.Message(), h)
	}
}

// skiplock is a parameter of start and stop only, and for root@pam only.
func TestLXCSkiplockIsRootOnly(t *testing.T) {
	tg := target(t, pvesim.Options{})
	if tg.Config().TokenID == "" {
		t.Skip("needs an API token: the refusal is for anyone but root@pam")
	}
	covers(tg, "POST /nodes/{node}/lxc/{vmid}/status/start", "POST /nodes/{node}/lxc/{vmid}/status/stop",
		"POST /nodes/{node}/lxc/{vmid}/status/shutdown", "DELETE /nodes/{node}/lxc/{vmid}")
	stopped := tg.createCT("skiplock")
	running := tg.createCT("skiplockrun")
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", running, "/status/start"), nil)
	const notInSchema = "property is not defined in schema and the schema does not allow additional properties"
	cases := []struct {
		reason, method, path, message string
	}{
		// pve-container src/PVE/API2/LXC/Status.pm, vm_start: raise_param_exc({ skiplock =>
		// "Only root may use this option." }) if $skiplock && $authuser ne 'root@pam' (a token is not root@pam).
		{"start with skiplock as a token", http.MethodPost, tg.guestPath("lxc", stopped, "/status/start"), "Only root may use this option."},
		// pve-container src/PVE/API2/LXC/Status.pm, vm_stop: the same check.
		{"stop with skiplock as a token", http.MethodPost, tg.guestPath("lxc", running, "/status/stop"), "Only root may use this option."},
		// pve-container src/PVE/API2/LXC.pm, destroy_vm and src/PVE/API2/LXC/Status.pm, vm_shutdown:
		// no skiplock parameter (additionalProperties => 0).
		{"destroy has no skiplock", http.MethodDelete, tg.guestPath("lxc", stopped, ""), notInSchema},
		{"shutdown has no skiplock", http.MethodPost, tg.guestPath("lxc", running, "/status/shutdown"), notInSchema},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			tg := tg.in(t)
			res := tg.raw(tc.method, tc.path, Params("skiplock", "1"))
			if res.Status != http.StatusBadRequest || res.Errors()["skiplock"] != tc.message {
				t.Errorf("%s: %s %s, want 400 with errors.skiplock %q", tc.reason, res.StatusLine, res.Text, tc.message)
			}
		})
	}

	// root@pam itself may: pve-container src/PVE/API2/LXC/Status.pm, vm_start's worker skips
	// check_lock when $skiplock is set.
	t.Run("root@pam starts a locked CT", func(t *testing.T) {
		tg := tg.in(t)
		sim := tg.requireSim("needs a container locked by a backup and root@pam's password")
		locked := tg.vmid()
		if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: tg.Node(), VMID: locked,
			Config: map[string]string{"hostname": "s", "rootfs": tg.Storage() + ":2", "lock": "backup"}}); err != nil {
			t.Fatal(err)
		}
		cl, err := tg.PasswordClient()
		if err != nil {
			t.Fatal(err)
		}
		var upid string
		if err := cl.Post(tg.ctx(), tg.guestPath("lxc", locked, "/status/start"), map[string]any{"skiplock": 1}, &upid); err != nil {
			t.Fatalf("start with skiplock as root@pam: %v", err)
		}
		if exit := tg.task(upid); exit != "OK" {
			t.Fatalf("start with skiplock ended %q", exit)
		}
		if g, _ := sim.Guest(locked); g.Status != "running" {
			t.Errorf("root@pam's skiplock start: status %q", g.Status)
		}
	})
}

// The power handlers only ask check_running before they fork, with pve-container's own
// words: "CT <vmid> not running", but "VM <vmid> not running" for reboot.
func TestLXCPowerRefusals(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/lxc/{vmid}/status/stop", "POST /nodes/{node}/lxc/{vmid}/status/shutdown",
		"POST /nodes/{node}/lxc/{vmid}/status/reboot", "POST /nodes/{node}/lxc/{vmid}/status/start", "GET /nodes/{node}/lxc/{vmid}/interfaces")
	id, missing := tg.createCT("power"), tg.vmid()
	s, m := strconv.Itoa(id), strconv.Itoa(missing)
	cases := []struct {
		reason, path, message string
	}{
		// pve-container src/PVE/API2/LXC/Status.pm, vm_stop: die "CT $vmid not running\n".
		{"stop of a stopped CT", tg.guestPath("lxc", id, "/status/stop"), "CT " + s + " not running\n"},
		// pve-container src/PVE/API2/LXC/Status.pm, vm_shutdown: die "CT $vmid not running\n".
		{"shutdown of a stopped CT", tg.guestPath("lxc", id, "/status/shutdown"), "CT " + s + " not running\n"},
		// pve-container src/PVE/API2/LXC/Status.pm, vm_reboot: die "VM $vmid not running\n".
		{"reboot of a stopped CT says VM", tg.guestPath("lxc", id, "/status/reboot"), "VM " + s + " not running\n"},
		// The handlers load no config first: a CT that does not exist is just not running.
		{"stop of a missing CT", tg.guestPath("lxc", missing, "/status/stop"), "CT " + m + " not running\n"},
		{"reboot of a missing CT", tg.guestPath("lxc", missing, "/status/reboot"), "VM " + m + " not running\n"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			tg := tg.in(t)
			res := tg.raw(http.MethodPost, tc.path, nil)
			if res.Status != http.StatusInternalServerError || res.Message() != tc.message {
				t.Errorf("%s: %s %q, want 500 %q", tc.reason, res.StatusLine, res.Message(), tc.message)
			}
		})
	}

	// pve-container src/PVE/API2/LXC.pm, ip (GET interfaces) returns PVE::LXC::get_interfaces,
	// which returns nothing when find_lxc_pid dies (src/PVE/LXC.pm): data null, not an error,
	// for a stopped CT and for one that is not there.
	for _, vmid := range []int{id, missing} {
		res := tg.raw(http.MethodGet, tg.guestPath("lxc", vmid, "/interfaces"), nil)
		if res.Status != http.StatusOK || string(res.Body["data"]) != "null" {
			t.Errorf("interfaces of CT %d (not running): %s %s, want 200 with data null", vmid, res.StatusLine, res.Text)
		}
	}

	// pve-container src/PVE/API2/LXC/Status.pm, vm_start: only check_running before the fork;
	// the vzstart worker's load_config fails (pve-guest-common src/PVE/AbstractConfig.pm, load_config).
	res := tg.raw(http.MethodPost, tg.guestPath("lxc", missing, "/status/start"), nil)
	if res.Status != http.StatusOK {
		t.Fatalf("start of a missing CT is no request error: %s %s", res.StatusLine, res.Text)
	}
	want := "Configuration file 'nodes/" + tg.Node() + "/lxc/" + m + ".conf' does not exist"
	if exit := tg.task(res.UPID()); !strings.Contains(exit, want) {
		t.Errorf("start of a missing CT ended %q, want %q", exit, want)
	}
}

// pve-container src/PVE/LXC.pm, vm_reboot checks no lock: it stops the container and
// vm_start runs systemctl, whose prestart hook (src/lxc-pve-prestart-hook) dies on the
// lock, so the task fails with run_command's message and the container stays stopped.
func TestLXCRebootOfALockedCT(t *testing.T) {
	tg := target(t, pvesim.Options{})
	sim := tg.requireSim("needs a running container locked by a backup")
	covers(tg, "POST /nodes/{node}/lxc/{vmid}/status/reboot")
	id := tg.vmid()
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: tg.Node(), VMID: id, Running: true,
		Config: map[string]string{"hostname": "r", "rootfs": tg.Storage() + ":2", "lock": "backup"}}); err != nil {
		t.Fatal(err)
	}
	res := tg.raw(http.MethodPost, tg.guestPath("lxc", id, "/status/reboot"), nil)
	if res.Status != http.StatusOK {
		t.Fatalf("reboot request: %s %s", res.StatusLine, res.Text)
	}
	want := "command 'systemctl start pve-container@" + strconv.Itoa(id) + "' failed: exit code 1"
	if exit := tg.task(res.UPID()); !strings.Contains(exit, want) {
		t.Errorf("reboot of a locked CT ended %q, want %q", exit, want)
	}
	if g, _ := sim.Guest(id); g.Status != "stopped" {
		t.Errorf("after the failed reboot: %q, want stopped", g.Status)
	}
}
