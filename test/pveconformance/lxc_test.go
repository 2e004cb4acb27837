package pveconformance

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// createCT creates a stopped container of this run from the target's
// container template and removes it when the case ends.
func (c *tcase) createCT(purpose string, extra ...string) int {
	c.t.Helper()
	tmpl := c.Config().CTTemplate
	if tmpl == "" {
		c.t.Skipf("needs a container template: set %s", EnvCTTemplate)
	}
	id := c.vmid()
	p := Params(append([]string{"vmid", strconv.Itoa(id), "hostname", c.GuestName(purpose), "pool", c.Pool(), "ostemplate", tmpl,
		"rootfs", c.Storage() + ":1", "unprivileged", "1", "memory", "256"}, extra...)...)
	c.mustTask(http.MethodPost, "/nodes/"+url.PathEscape(c.Node())+"/lxc", p)
	c.t.Cleanup(func() { c.destroy("lxc", id) })
	return id
}

// A container from a template archive with every key the provider renders
// from a Container's spec (pve-container src/PVE/API2/LXC.pm create_vm):
// volumes allocated as <storage>:vm-<vmid>-disk-<n>, the password never
// read back, the features and mount point as sent.
func TestLXCCreate(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/lxc vmid ostemplate unprivileged password ssh-public-keys hostname description cores memory swap rootfs mp[n] net[n] features tags onboot nameserver searchdomain")
	id := tg.createCT("create", "password", "not-a-secret-1", "ssh-public-keys", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBnL0mBQ6W3oDXx8r3Eo3mOeCrk8rJg2yJ0t1kJvU5bq cf",
		"description", "conformance", "cores", "1", "swap", "128", "mp0", tg.Storage()+":1,mp=/data", "net0", "name=eth0,bridge=vmbr0,ip=dhcp",
		"features", "nesting=1", "tags", "conformance", "onboot", "0", "nameserver", "192.0.2.53", "searchdomain", "example.test")
	var cfg map[string]any
	tg.data(tg.guestPath("lxc", id, "/config"), nil, &cfg)
	// nameserver and searchdomain are plain strings in pve-container's
	// schema (src/PVE/LXC/Config.pm $confdesc), kept as sent.
	if cfg["nameserver"] != "192.0.2.53" || cfg["searchdomain"] != "example.test" {
		t.Errorf("nameserver=%#v searchdomain=%#v", cfg["nameserver"], cfg["searchdomain"])
	}
	vm := "vm-" + strconv.Itoa(id) + "-disk-"
	if r, _ := cfg["rootfs"].(string); !strings.Contains(r, vm) || !strings.Contains(r, "size=1G") {
		t.Errorf("rootfs %v", cfg["rootfs"])
	}
	if m, _ := cfg["mp0"].(string); !strings.Contains(m, vm) || !strings.Contains(m, "mp=/data") {
		t.Errorf("mp0 %v", cfg["mp0"])
	}
	if cfg["password"] != nil || cfg["features"] != "nesting=1" || cfg["unprivileged"] != float64(1) || cfg["hostname"] != tg.GuestName("create") {
		t.Errorf("config: %v", cfg)
	}
	if n, _ := cfg["net0"].(string); !strings.Contains(n, "hwaddr=") || !strings.Contains(n, "bridge=vmbr0") {
		t.Errorf("net0 gets a MAC: %v", cfg["net0"])
	}
}

// Container config, power, interfaces, resize and destroy: PUT config is
// synchronous and keeps what needs a restart pending (pve-container
// src/PVE/API2/LXC/Config.pm update_vm, PVE/LXC/Config.pm
// vmconfig_hotplug_pending); start, shutdown with forceStop, reboot and
// stop run as tasks (src/PVE/API2/LXC/Status.pm); /interfaces answers the
// running container's interfaces (src/PVE/API2/LXC.pm ip); resize grows a
// volume in a task (src/PVE/API2/LXC.pm resize_vm).
func TestLXCConfigPowerAndResize(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "PUT /nodes/{node}/lxc/{vmid}/config cores memory delete", "GET /nodes/{node}/lxc/{vmid}/pending",
		"POST /nodes/{node}/lxc/{vmid}/status/start", "POST /nodes/{node}/lxc/{vmid}/status/shutdown forceStop timeout",
		"POST /nodes/{node}/lxc/{vmid}/status/reboot timeout", "POST /nodes/{node}/lxc/{vmid}/status/stop",
		"GET /nodes/{node}/lxc/{vmid}/status/current", "GET /nodes/{node}/lxc/{vmid}/interfaces",
		"PUT /nodes/{node}/lxc/{vmid}/resize disk size", "DELETE /nodes/{node}/lxc/{vmid} purge destroy-unreferenced-disks")
	id := tg.createCT("power", "tags", "x", "net0", "name=eth0,bridge=vmbr0,ip=dhcp")
	if res := tg.raw(http.MethodPut, tg.guestPath("lxc", id, "/config"), Params("cores", "2", "memory", "384", "delete", "tags")); res.Status != http.StatusOK {
		t.Fatalf("PUT config: %s %s", res.StatusLine, res.Text)
	}
	var pending []map[string]any
	tg.data(tg.guestPath("lxc", id, "/pending"), nil, &pending)
	for _, it := range pending {
		if it["key"] == "cores" && (fmt.Sprint(it["value"]) != "2" || it["pending"] != nil) {
			t.Errorf("a stopped container applies at once: %v", it)
		}
	}
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/status/start"), nil)
	var cur map[string]any
	tg.data(tg.guestPath("lxc", id, "/status/current"), nil, &cur)
	if cur["status"] != "running" || cur["type"] != "lxc" {
		t.Errorf("status/current: %v", cur)
	}
	var ifs []map[string]any
	tg.data(tg.guestPath("lxc", id, "/interfaces"), nil, &ifs)
	names := map[any]bool{}
	for _, i := range ifs {
		names[i["name"]] = true
	}
	if !names["lo"] || !names["eth0"] {
		t.Errorf("interfaces: %v", ifs)
	}
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/status/reboot"), Params("timeout", "30"))
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/status/stop"), nil)
	// Unlike qemu-server, a stopped container's shutdown is refused before
	// any task (src/PVE/API2/LXC/Status.pm vm_shutdown: check_running).
	res := tg.raw(http.MethodPost, tg.guestPath("lxc", id, "/status/shutdown"), Params("forceStop", "1", "timeout", "30"))
	if res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != "CT "+strconv.Itoa(id)+" not running" {
		t.Errorf("shutdown of a stopped CT: %s %q", res.StatusLine, res.Message())
	}
	res = tg.raw(http.MethodPut, tg.guestPath("lxc", id, "/resize"), Params("disk", "rootfs", "size", "+1G"))
	if res.Status != http.StatusOK || tg.task(res.UPID()) != "OK" {
		t.Fatalf("resize: %s %s", res.StatusLine, res.Text)
	}
	var cfg map[string]any
	tg.data(tg.guestPath("lxc", id, "/config"), nil, &cfg)
	if r, _ := cfg["rootfs"].(string); !strings.Contains(r, "size=2G") {
		t.Errorf("rootfs after resize: %v", cfg["rootfs"])
	}
	tg.mustTask(http.MethodDelete, tg.guestPath("lxc", id, ""), Params("purge", "1", "destroy-unreferenced-disks", "1"))
}

// Container snapshots, template and clones (pve-container src/PVE/API2/LXC/
// Snapshot.pm, src/PVE/API2/LXC.pm template and clone_vm; template needs a
// storage that can hold base volumes): the snapshot list
// ends with "current"; a template's clone is linked unless full; a clone
// takes hostname, description and pool.
func TestLXCSnapshotsTemplateAndClone(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/lxc/{vmid}/snapshot snapname description", "GET /nodes/{node}/lxc/{vmid}/snapshot",
		"PUT /nodes/{node}/lxc/{vmid}/snapshot/{snapname}/config description", "POST /nodes/{node}/lxc/{vmid}/snapshot/{snapname}/rollback",
		"DELETE /nodes/{node}/lxc/{vmid}/snapshot/{snapname}", "POST /nodes/{node}/lxc/{vmid}/template",
		"POST /nodes/{node}/lxc/{vmid}/clone newid full hostname description target storage pool")
	id := tg.createCT("ctsnap")
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/snapshot"), Params("snapname", "first", "description", "one"))
	var snaps []map[string]any
	tg.data(tg.guestPath("lxc", id, "/snapshot"), nil, &snaps)
	if len(snaps) != 2 || snaps[0]["name"] != "first" || snaps[1]["name"] != "current" || snaps[1]["parent"] != "first" {
		t.Fatalf("snapshot list: %v", snaps)
	}
	if res := tg.raw(http.MethodPut, tg.guestPath("lxc", id, "/snapshot/first/config"), Params("description", "renamed")); res.Status != http.StatusOK {
		t.Fatalf("PUT snapshot config: %s", res.StatusLine)
	}
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/snapshot/first/rollback"), nil)
	tg.mustTask(http.MethodDelete, tg.guestPath("lxc", id, "/snapshot/first"), nil)
	// template is synchronous for containers: it returns null
	// (src/PVE/API2/LXC.pm template, returns type null).
	if res := tg.raw(http.MethodPost, tg.guestPath("lxc", id, "/template"), nil); res.Status != http.StatusOK || res.UPID() != "" {
		t.Fatalf("template: %s %s", res.StatusLine, res.Text)
	}

	linked, full := tg.vmid(), tg.vmid()
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/clone"), Params("newid", strconv.Itoa(linked), "hostname", tg.GuestName("ctlinked"),
		"description", "linked", "pool", tg.Pool(), "full", "0", "target", tg.Node()))
	t.Cleanup(func() { tg.destroy("lxc", linked) })
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/clone"), Params("newid", strconv.Itoa(full), "hostname", tg.GuestName("ctfull"),
		"pool", tg.Pool(), "full", "1", "storage", tg.Storage()))
	t.Cleanup(func() { tg.destroy("lxc", full) })
	var l, f map[string]any
	tg.data(tg.guestPath("lxc", linked, "/config"), nil, &l)
	tg.data(tg.guestPath("lxc", full, "/config"), nil, &f)
	// The linked volume's name depends on the storage: lvm-thin answers
	// vm-<newid>-disk-<n> (pve-storage src/PVE/Storage/LvmThinPlugin.pm
	// clone_image), dir/qcow2 and ZFS base-<id>-disk-<n>/vm-<newid>-disk-<n>.
	if l["hostname"] != tg.GuestName("ctlinked") || !strings.Contains(l["rootfs"].(string), "vm-"+strconv.Itoa(linked)+"-disk-0") {
		t.Errorf("linked clone: %v", l)
	}
	if strings.Contains(f["rootfs"].(string), "base-") {
		t.Errorf("full clone: %v", f["rootfs"])
	}
}

// Every key the provider renders from a Container's spec through PUT config
// on a stopped container: a new mount point is allocated at once
// (pve-container src/PVE/API2/LXC/Config.pm update_vm, PVE/LXC/Config.pm
// update_pct_config), the rootfs may be re-sent unchanged.
func TestLXCConfigEverySpecKey(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "PUT /nodes/{node}/lxc/{vmid}/config hostname description cores memory swap rootfs mp[n] net[n] features tags onboot nameserver searchdomain delete")
	id := tg.createCT("ctspec", "cpulimit", "1")
	var cfg map[string]any
	tg.data(tg.guestPath("lxc", id, "/config"), nil, &cfg)
	p := Params("hostname", tg.GuestName("ctspec2"), "description", "updated", "cores", "2", "memory", "300", "swap", "64",
		"rootfs", cfg["rootfs"].(string), "mp1", tg.Storage()+":1,mp=/srv", "net1", "name=eth1,bridge=vmbr0,ip=dhcp",
		"features", "nesting=1,keyctl=1", "tags", "updated", "onboot", "1", "nameserver", "192.0.2.54 192.0.2.55", "searchdomain", "updated.test", "delete", "cpulimit")
	if res := tg.raw(http.MethodPut, tg.guestPath("lxc", id, "/config"), p); res.Status != http.StatusOK {
		t.Fatalf("PUT config: %s %s", res.StatusLine, res.Text)
	}
	tg.data(tg.guestPath("lxc", id, "/config"), nil, &cfg)
	if m, _ := cfg["mp1"].(string); !strings.Contains(m, "vm-"+strconv.Itoa(id)+"-disk-") || cfg["features"] != "nesting=1,keyctl=1" || cfg["hostname"] != tg.GuestName("ctspec2") ||
		cfg["nameserver"] != "192.0.2.54 192.0.2.55" || cfg["searchdomain"] != "updated.test" {
		t.Errorf("config after update: %v", cfg)
	}
}
