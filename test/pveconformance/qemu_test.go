package pveconformance

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A create from scratch with every key the provider renders from a
// VirtualMachine's spec: the config reads back with PVE's types (numbers
// for integer properties, strings for the rest; qemu-server PVE/API2/Qemu.pm
// create_vm and vm_config, the confdesc schema), disks allocated as
// <storage>:vm-<vmid>-disk-<n>, and a second create of the same VMID is
// 500 "unable to create VM N - VM N already exists on node '<node>'"
// (create_vm's check of the config file).
func TestQemuCreateFromScratch(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu vmid name description cores sockets memory scsihw boot scsi[n] virtio[n] sata[n] ide[n] net[n] "+
		"ciuser cipassword sshkeys searchdomain nameserver ciupgrade ipconfig[n] tags onboot agent cpu numa balloon")
	id := tg.vmid()
	st := tg.Storage()
	p := Params("vmid", strconv.Itoa(id), "name", tg.GuestName("scratch"), "pool", tg.Pool(), "description", "conformance",
		"cores", "2", "sockets", "1", "memory", "1024", "scsihw", "virtio-scsi-pci", "boot", "order=scsi0",
		"scsi0", st+":1", "virtio1", st+":1", "sata2", st+":1", "ide2", st+":cloudinit", "net0", "virtio,bridge=vmbr0",
		"ciuser", "conformance", "cipassword", "not-a-secret-1", "sshkeys", "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIBnL0mBQ6W3oDXx8r3Eo3mOeCrk8rJg2yJ0t1kJvU5bq%20cf",
		"searchdomain", "example.test", "nameserver", "192.0.2.53", "ciupgrade", "0", "ipconfig0", "ip=192.0.2.10/24,gw=192.0.2.1",
		"tags", "conformance", "onboot", "0", "agent", "1", "cpu", "host", "numa", "1", "balloon", "512")
	tg.mustTask(http.MethodPost, "/nodes/"+url.PathEscape(tg.Node())+"/qemu", p)
	t.Cleanup(func() { tg.destroy("qemu", id) })

	var cfg map[string]any
	tg.data(tg.guestPath("qemu", id, "/config"), nil, &cfg)
	if cfg["cores"] != float64(2) || cfg["memory"] != "1024" || cfg["onboot"] != float64(0) || cfg["agent"] != "1" || cfg["cipassword"] != "**********" {
		t.Errorf("types: cores=%#v memory=%#v onboot=%#v agent=%#v cipassword=%#v", cfg["cores"], cfg["memory"], cfg["onboot"], cfg["agent"], cfg["cipassword"])
	}
	// cpu is a property string, numa a boolean and balloon an integer in
	// qemu-server's schema (PVE/QemuServer.pm $confdesc, CPUConfig.pm).
	if cfg["cpu"] != "host" || cfg["numa"] != float64(1) || cfg["balloon"] != float64(512) {
		t.Errorf("cpu=%#v numa=%#v balloon=%#v", cfg["cpu"], cfg["numa"], cfg["balloon"])
	}
	for _, dev := range []string{"scsi0", "virtio1", "sata2"} {
		if v, _ := cfg[dev].(string); !strings.Contains(v, "vm-"+strconv.Itoa(id)+"-disk-") || !strings.Contains(v, "size=1G") {
			t.Errorf("%s = %v", dev, cfg[dev])
		}
	}
	if v, _ := cfg["ide2"].(string); !strings.Contains(v, "cloudinit") || !strings.Contains(v, "media=cdrom") {
		t.Errorf("ide2 = %v", cfg["ide2"])
	}
	if v, _ := cfg["net0"].(string); !strings.HasPrefix(v, "virtio=") || !strings.Contains(v, "bridge=vmbr0") {
		t.Errorf("net0 gets a MAC: %v", cfg["net0"])
	}
	res := tg.raw(http.MethodPost, "/nodes/"+url.PathEscape(tg.Node())+"/qemu", Params("vmid", strconv.Itoa(id)))
	want := "unable to create VM " + strconv.Itoa(id) + " - VM " + strconv.Itoa(id) + " already exists on node '" + tg.Node() + "'"
	if res.Status != http.StatusInternalServerError || !strings.Contains(res.Message(), want) {
		t.Errorf("duplicate create: %s %s, want 500 %q", res.StatusLine, res.Text, want)
	}
}

// PUT config changes keys synchronously; on a running guest what cannot be
// hot-plugged stays pending (qemu-server PVE/API2/Qemu.pm update_vm_api,
// vmconfig_apply_pending / hotplug): /pending lists value and pending. POST
// config runs the same in a worker and answers a UPID; a new disk is
// allocated there. A stale digest is 500 "detected modified configuration -
// file changed by other user? Try again." (PVE::Tools assert_if_modified).
func TestQemuConfigSyncAsyncPending(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "PUT /nodes/{node}/qemu/{vmid}/config cores memory delete", "POST /nodes/{node}/qemu/{vmid}/config scsi[n]",
		"GET /nodes/{node}/qemu/{vmid}/pending", "POST /nodes/{node}/qemu/{vmid}/status/start", "GET /nodes/{node}/qemu/{vmid}/cloudinit")
	id := tg.createVM("config", "cores", "1", "tags", "x", "ide2", tg.Storage()+":cloudinit", "ciuser", "old")
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/start"), nil)

	if res := tg.raw(http.MethodPut, tg.guestPath("qemu", id, "/config"), Params("cores", "2", "memory", "768", "delete", "tags")); res.Status != http.StatusOK {
		t.Fatalf("PUT config: %s %s", res.StatusLine, res.Text)
	}
	var pending []map[string]any
	tg.data(tg.guestPath("qemu", id, "/pending"), nil, &pending)
	byKey := map[string]map[string]any{}
	for _, it := range pending {
		byKey[it["key"].(string)] = it
	}
	if byKey["memory"]["pending"] != "768" || byKey["memory"]["value"] != "512" {
		t.Errorf("memory is not hot-plugged by default: %v", byKey["memory"])
	}
	if byKey["tags"]["delete"] == nil && byKey["tags"] != nil {
		t.Errorf("a deleted key is dropped or marked delete: %v", byKey["tags"])
	}
	res := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/config"), Params("scsi1", tg.Storage()+":1"))
	if res.Status != http.StatusOK || !strings.HasPrefix(res.UPID(), "UPID:") {
		t.Fatalf("POST config answers a UPID: %s %s", res.StatusLine, res.Text)
	}
	if exit := tg.task(res.UPID()); exit != "OK" {
		t.Fatalf("POST config task: %s", exit)
	}
	if res := tg.raw(http.MethodPut, tg.guestPath("qemu", id, "/config"), Params("cores", "3", "digest", "0123456789abcdef0123456789abcdef01234567")); res.Status != http.StatusInternalServerError ||
		!strings.Contains(res.Message(), "detected modified configuration - file changed by other user? Try again.") {
		t.Errorf("stale digest: %s %s", res.StatusLine, res.Text)
	}
	if res := tg.raw(http.MethodPut, tg.guestPath("qemu", id, "/config"), Params("ciuser", "new")); res.Status != http.StatusOK {
		t.Fatalf("PUT ciuser: %s", res.StatusLine)
	}
	// cloudinit_pending_properties: the drive still has the old value.
	var ci []map[string]any
	tg.data(tg.guestPath("qemu", id, "/cloudinit"), nil, &ci)
	for _, it := range ci {
		if it["key"] == "ciuser" && (it["value"] != "old" || it["pending"] != "new") {
			t.Errorf("cloudinit ciuser: %v", it)
		}
	}
}

// Power: a second start fails its task "VM N already running"; reboot of a
// stopped guest is 500 "VM N not running" before any task (qemu-server
// PVE/API2/Qemu.pm vm_start, vm_reboot: check_running); a template does not
// start: "you can't start a vm if it's a template" (vm_start); stop of a
// stopped guest ends OK; reset of a stopped one fails its task "VM N not
// running" (vm_reset).
func TestQemuPower(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/status/start", "POST /nodes/{node}/qemu/{vmid}/status/shutdown forceStop timeout",
		"POST /nodes/{node}/qemu/{vmid}/status/stop", "POST /nodes/{node}/qemu/{vmid}/status/reboot timeout",
		"GET /nodes/{node}/qemu/{vmid}/status/current")
	id := tg.createVM("power")
	sid := strconv.Itoa(id)
	res := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/status/reboot"), Params("timeout", "10"))
	if res.Status != http.StatusInternalServerError || res.Message() != "VM "+sid+" not running\n" && res.Message() != "VM "+sid+" not running" {
		t.Errorf("reboot of a stopped VM: %s %q", res.StatusLine, res.Message())
	}
	// vm_reset checks in its worker: the task fails.
	reset := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/status/reset"), nil)
	if exit := tg.task(reset.UPID()); exit != "VM "+sid+" not running" {
		t.Errorf("reset of a stopped VM ended %q", exit)
	}
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/start"), nil)
	var cur map[string]any
	tg.data(tg.guestPath("qemu", id, "/status/current"), nil, &cur)
	if cur["status"] != "running" || cur["qmpstatus"] != "running" || cur["vmid"] != float64(id) {
		t.Errorf("status/current: %v", cur)
	}
	again := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/status/start"), nil)
	if exit := tg.task(again.UPID()); exit != "VM "+sid+" already running" {
		t.Errorf("second start ended %q", exit)
	}
	// No OS answers ACPI here: forceStop stops it when the timeout passes.
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/shutdown"), Params("forceStop", "1", "timeout", "5"))
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/stop"), nil)
	tg.data(tg.guestPath("qemu", id, "/status/current"), nil, &cur)
	if cur["status"] != "stopped" {
		t.Errorf("after stop: %v", cur["status"])
	}
}

// The guest agent endpoints fail on a stopped VM: 500 "VM N is not
// running", and without agent configured "No QEMU guest agent configured"
// (qemu-server PVE/QemuServer/Agent.pm assert_agent_available).
func TestQemuAgentErrors(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "GET /nodes/{node}/qemu/{vmid}/agent/network-get-interfaces", "GET /nodes/{node}/qemu/{vmid}/agent/get-osinfo")
	with := tg.createVM("agent", "agent", "1")
	without := tg.createVM("noagent")
	for _, c := range []struct {
		vmid int
		path string
		want string
	}{
		{with, "/agent/network-get-interfaces", "VM " + strconv.Itoa(with) + " is not running"},
		{without, "/agent/get-osinfo", "No QEMU guest agent configured"},
	} {
		res := tg.raw(http.MethodGet, tg.guestPath("qemu", c.vmid, c.path), nil)
		if res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != c.want {
			t.Errorf("%d %s: %s %q, want 500 %q", c.vmid, c.path, res.StatusLine, res.Message(), c.want)
		}
	}
}

// Resize grows a disk in a task; shrinking fails the task "shrinking disks
// is not supported" (qemu-server PVE/API2/Qemu.pm resize_vm).
func TestQemuResize(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "PUT /nodes/{node}/qemu/{vmid}/resize disk size")
	id := tg.createVM("resize")
	res := tg.raw(http.MethodPut, tg.guestPath("qemu", id, "/resize"), Params("disk", "scsi0", "size", "+1G"))
	if exit := tg.task(res.UPID()); exit != "OK" {
		t.Fatalf("grow: %s %s", res.StatusLine, exit)
	}
	var cfg map[string]any
	tg.data(tg.guestPath("qemu", id, "/config"), nil, &cfg)
	if v, _ := cfg["scsi0"].(string); !strings.Contains(v, "size=2G") {
		t.Errorf("after grow: %v", cfg["scsi0"])
	}
	res = tg.raw(http.MethodPut, tg.guestPath("qemu", id, "/resize"), Params("disk", "scsi0", "size", "1G"))
	if exit := tg.task(res.UPID()); exit != "shrinking disks is not supported" {
		t.Errorf("shrink ended %q", exit)
	}
}

// DELETE with purge and destroy-unreferenced-disks removes the guest in a
// task (qemu-server PVE/API2/Qemu.pm destroy_vm); the VMID is free again.
func TestQemuDestroy(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "DELETE /nodes/{node}/qemu/{vmid} purge destroy-unreferenced-disks")
	id := tg.createVM("destroy")
	tg.mustTask(http.MethodDelete, tg.guestPath("qemu", id, ""), Params("purge", "1", "destroy-unreferenced-disks", "1"))
	if res := tg.raw(http.MethodGet, "/cluster/nextid", Params("vmid", strconv.Itoa(id))); res.Status != http.StatusOK {
		t.Errorf("vmid still taken: %s", res.Text)
	}
	res := tg.raw(http.MethodGet, tg.guestPath("qemu", id, "/config"), nil)
	if res.Status != http.StatusInternalServerError || !strings.Contains(res.Message(), "does not exist") {
		t.Errorf("config of a destroyed VM: %s %s", res.StatusLine, res.Text)
	}
}

// qemuSpecUpdate is every key the provider renders from a VirtualMachine's
// spec but hostpci (needs hardware) and cicustom (needs a snippets file),
// as a config update on a stopped VM of this run.
func (c *tcase) qemuSpecUpdate(purpose string) url.Values {
	st := c.Storage()
	return Params("name", c.GuestName(purpose), "description", "updated", "cores", "2", "sockets", "1", "memory", "640",
		"scsihw", "virtio-scsi-single", "boot", "order=scsi0", "scsi1", st+":1", "virtio2", st+":1", "sata3", st+":1",
		"ide2", st+":cloudinit", "net1", "virtio,bridge=vmbr0", "ciuser", "u", "cipassword", "not-a-secret-2",
		"sshkeys", "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIBnL0mBQ6W3oDXx8r3Eo3mOeCrk8rJg2yJ0t1kJvU5bq%20cf",
		"searchdomain", "example.test", "nameserver", "192.0.2.53", "ciupgrade", "1", "ipconfig0", "ip=dhcp",
		"tags", "updated", "onboot", "1", "agent", "1", "cpu", "x86-64-v2-AES", "numa", "1", "balloon", "256", "delete", "tablet")
}

// Every spec key through PUT config (synchronous; a stopped VM applies all
// at once, new disks allocated: qemu-server PVE/API2/Qemu.pm update_vm_api,
// vmconfig_apply_pending) and through POST config (the same in a worker).
func TestQemuConfigEverySpecKey(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "PUT /nodes/{node}/qemu/{vmid}/config name description cores sockets memory scsihw boot scsi[n] virtio[n] sata[n] ide[n] net[n] "+
		"ciuser cipassword sshkeys searchdomain nameserver ciupgrade ipconfig[n] tags onboot agent cpu numa balloon delete",
		"POST /nodes/{node}/qemu/{vmid}/config name description cores sockets memory scsihw boot scsi[n] virtio[n] sata[n] ide[n] net[n] "+
			"ciuser cipassword sshkeys searchdomain nameserver ciupgrade ipconfig[n] tags onboot agent cpu numa balloon delete")
	for _, method := range []string{http.MethodPut, http.MethodPost} {
		id := tg.createVM("spec", "tablet", "1")
		res := tg.raw(method, tg.guestPath("qemu", id, "/config"), tg.qemuSpecUpdate("spec-"+strings.ToLower(method)))
		if res.Status != http.StatusOK {
			t.Fatalf("%s config: %s %s", method, res.StatusLine, res.Text)
		}
		if method == http.MethodPost {
			if exit := tg.task(res.UPID()); exit != "OK" {
				t.Fatalf("POST config task: %s", exit)
			}
		}
		var cfg map[string]any
		tg.data(tg.guestPath("qemu", id, "/config"), nil, &cfg)
		if cfg["memory"] != "640" || cfg["cores"] != float64(2) || cfg["tablet"] != nil || cfg["onboot"] != float64(1) || cfg["tags"] != "updated" ||
			cfg["cpu"] != "x86-64-v2-AES" || cfg["numa"] != float64(1) || cfg["balloon"] != float64(256) {
			t.Errorf("%s: config after update: %v", method, cfg)
		}
		for _, dev := range []string{"scsi1", "virtio2", "sata3"} {
			if v, _ := cfg[dev].(string); !strings.Contains(v, "vm-"+strconv.Itoa(id)+"-disk-") {
				t.Errorf("%s: %s allocated as %v", method, dev, cfg[dev])
			}
		}
	}
}

// What refuses a destroy or a template conversion before any task: a
// running VM ("VM N is running - destroy failed", qemu-server
// PVE/API2/Qemu.pm destroy_vm; "you can't convert a VM to template if VM is
// running", template), protection ("can't remove VM N - protection mode
// enabled", PVE::AbstractConfig check_protection); a destroyed VM's config
// is 500 "Configuration file 'nodes/<node>/qemu-server/N.conf' does not
// exist" (PVE::QemuConfig load_config).
func TestQemuDestroyAndTemplateRefusals(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "DELETE /nodes/{node}/qemu/{vmid}", "POST /nodes/{node}/qemu/{vmid}/template")
	id := tg.createVM("refusals", "protection", "1")
	sid := strconv.Itoa(id)
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/start"), nil)
	want := func(res Response, msg string) {
		t.Helper()
		if res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != msg {
			t.Errorf("%s %q, want 500 %q", res.StatusLine, res.Message(), msg)
		}
	}
	want(tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/template"), nil), "you can't convert a VM to template if VM is running")
	want(tg.raw(http.MethodDelete, tg.guestPath("qemu", id, ""), nil), "VM "+sid+" is running - destroy failed")
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/stop"), nil)
	want(tg.raw(http.MethodDelete, tg.guestPath("qemu", id, ""), nil), "can't remove VM "+sid+" - protection mode enabled")
	if res := tg.raw(http.MethodPut, tg.guestPath("qemu", id, "/config"), Params("delete", "protection")); res.Status != http.StatusOK {
		t.Fatal(res.StatusLine)
	}
	tg.mustTask(http.MethodDelete, tg.guestPath("qemu", id, ""), nil)
	want(tg.raw(http.MethodGet, tg.guestPath("qemu", id, "/config"), nil), "Configuration file 'nodes/"+tg.Node()+"/qemu-server/"+sid+".conf' does not exist")
}
