package pveconformance

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func ctOpt(name string, value any) proxmox.ContainerOption {
	return proxmox.ContainerOption{Name: name, Value: value}
}

// ctTemplate is the target's container template, or skips without one.
func (c *tcase) ctTemplate() string {
	c.t.Helper()
	tmpl := c.Config().CTTemplate
	if tmpl == "" {
		c.t.Skipf("needs a container template: set %s", EnvCTTemplate)
	}
	return tmpl
}

// volumeOf is the volume of a mount point value ("local-lvm:vm-1-disk-0,size=1G").
func volumeOf(mp any) string {
	s, _ := mp.(string)
	v, _, _ := strings.Cut(s, ",")
	return v
}

// A container's life through go-proxmox, as the provider drives it
// (pve-container src/PVE/API2/LXC.pm create_vm, destroy_vm, resize_vm,
// clone_vm, template, get_interfaces; src/PVE/API2/LXC/Status.pm vm_start;
// src/PVE/API2/LXC/Config.pm update_vm): the config reads back with
// memory a number and never the password, net0 with a hwaddr; PUT config
// answers null (go-proxmox: a nil task); a second start is refused "CT N
// already running"; on a running CT features wait in pending while memory
// applies (PVE/LXC/Config.pm vmconfig_hotplug_pending) and a reboot
// applies them; a running CT is not destroyed ("unable to destroy CT N -
// container is running"); a stopped CT lists no interfaces (data null);
// resize grows only ("unable to shrink disk size", "disk is already at
// specified size", before the fork); a CT with snapshots is no template
// ("unable to create template, because CT contains snapshots"); template
// answers null and its worker turns disks into base volumes; a template
// does not start (the vzstart task fails "you can't start a CT if it's a
// template"); /cluster/resources lists it as lxc/<vmid> with template 1.
func TestLXCLifecycleWithGoProxmox(t *testing.T) {
	tg := target(t, pvesim.Options{TaskDurations: map[string]time.Duration{"vztemplate": 150 * time.Millisecond}})
	covers(tg, "POST /nodes/{node}/lxc vmid ostemplate rootfs hostname memory cores password net[n] pool", "PUT /nodes/{node}/lxc/{vmid}/resize disk size",
		"POST /nodes/{node}/lxc/{vmid}/snapshot snapname", "POST /nodes/{node}/lxc/{vmid}/clone newid hostname", "POST /nodes/{node}/lxc/{vmid}/template",
		"GET /cluster/resources type")
	tmpl := tg.ctTemplate()
	ctx := tg.ctx()
	c := tg.goClient()
	node := c.NodeRef(tg.Node())
	id := tg.vmid()
	task, err := node.NewContainer(ctx, id, ctOpt("ostemplate", tmpl), ctOpt("rootfs", tg.Storage()+":2"), ctOpt("pool", tg.Pool()),
		ctOpt("hostname", tg.GuestName("ct")), ctOpt("memory", 1024), ctOpt("cores", 2), ctOpt("password", "s3cret-pass"),
		ctOpt("net0", "name=eth0,bridge=vmbr0,ip=dhcp"))
	tg.goMust("create", task, err)
	t.Cleanup(func() { tg.destroy("lxc", id) })

	ct, err := node.Container(ctx, id)
	if err != nil {
		t.Fatalf("container handle: %v", err)
	}
	rootfs := tg.Storage() + ":vm-" + itoa(id) + "-disk-0"
	cc := ct.ContainerConfig
	if cc.Memory == nil || *cc.Memory != 1024 || cc.Cores != 2 || cc.Hostname != tg.GuestName("ct") || volumeOf(cc.RootFS) != rootfs {
		t.Fatalf("config after create: %+v", cc)
	}
	raw := tg.config("lxc", id, nil)
	if _, leaked := raw["password"]; leaked {
		t.Error("the password must never be read back")
	}
	if _, isNum := raw["memory"].(float64); !isNum {
		t.Errorf("memory must be a JSON number, got %T", raw["memory"])
	}
	if net0, _ := raw["net0"].(string); !strings.HasPrefix(net0, "name=eth0,") || !strings.Contains(net0, "hwaddr=") {
		t.Errorf("net0 %q", net0)
	}
	if cfgTask, err := ct.Config(ctx, ctOpt("description", "managed")); err != nil || cfgTask != nil {
		t.Fatalf("PUT config: task %v err %v", cfgTask, err)
	}

	task, err = ct.Start(ctx)
	tg.goMust("start", task, err)
	if _, err := ct.Start(ctx); err == nil || !strings.Contains(err.Error(), "CT "+itoa(id)+" already running") {
		t.Errorf("second start: %v", err)
	}
	if _, err := ct.Config(ctx, ctOpt("features", "nesting=1"), ctOpt("memory", 2048)); err != nil {
		t.Fatal(err)
	}
	pending, err := ct.Pending(ctx)
	if err != nil || !hasPending(pending, "features", "nesting=1") {
		t.Errorf("features must be pending on a running CT: %v %+v", err, pending)
	}
	if cur := tg.config("lxc", id, Params("current", "1")); cur["features"] != nil || cur["memory"] != float64(2048) {
		t.Errorf("current config: %v", cur)
	}
	ifaces, err := ct.Interfaces(ctx)
	if err != nil || len(ifaces) < 2 || ifaces[0].Name != "lo" || ifaces[1].Name != "eth0" {
		t.Errorf("interfaces: %v %+v", err, ifaces)
	}
	task, err = ct.Reboot(ctx)
	tg.goMust("reboot", task, err)
	if cur := tg.config("lxc", id, Params("current", "1")); cur["features"] != "nesting=1" {
		t.Errorf("the reboot must apply what is pending: %v", cur)
	}
	if _, err := node.ContainerRef(id).Delete(ctx, nil); err == nil || !strings.Contains(err.Error(), "unable to destroy CT "+itoa(id)+" - container is running") {
		t.Errorf("delete of a running CT: %v", err)
	}
	task, err = ct.Shutdown(ctx, true, 30)
	tg.goMust("shutdown", task, err)
	if ifs, err := ct.Interfaces(ctx); err != nil || len(ifs) != 0 {
		t.Errorf("interfaces of a stopped CT: %v %v", ifs, err)
	}

	task, err = ct.Resize(ctx, "rootfs", "+1G")
	tg.goMust("grow", task, err)
	if rf := tg.config("lxc", id, nil)["rootfs"]; rf != rootfs+",size=3G" {
		t.Errorf("rootfs after the grow: %v", rf)
	}
	if _, err := ct.Resize(ctx, "rootfs", "1G"); err == nil || !strings.Contains(err.Error(), "unable to shrink disk size") {
		t.Errorf("shrink: %v", err)
	}
	if _, err := ct.Resize(ctx, "rootfs", "3G"); err == nil || !strings.Contains(err.Error(), "disk is already at specified size") {
		t.Errorf("same size: %v", err)
	}

	task, err = ct.NewSnapshot(ctx, "before")
	tg.goMust("snapshot", task, err)
	snaps, err := ct.Snapshots(ctx)
	if err != nil || len(snaps) != 2 || snaps[0].Name != "before" || snaps[1].Name != "current" || snaps[1].Parent != "before" {
		t.Errorf("snapshots: %v %+v", err, snaps)
	}
	if err := ct.Template(ctx); err == nil || !strings.Contains(err.Error(), "unable to create template, because CT contains snapshots") {
		t.Errorf("template with snapshots: %v", err)
	}
	task, err = ct.Snapshot("before").Delete(ctx)
	tg.goMust("delete snapshot", task, err)

	cloneID := tg.vmid()
	newid, task, err := ct.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: cloneID, Hostname: tg.GuestName("ct2"), Pool: tg.Pool()})
	tg.goMust("clone", task, err)
	t.Cleanup(func() { tg.destroy("lxc", cloneID) })
	if clone := tg.config("lxc", newid, nil); newid != cloneID || clone["hostname"] != tg.GuestName("ct2") ||
		volumeOf(clone["rootfs"]) != tg.Storage()+":vm-"+itoa(cloneID)+"-disk-0" || clone["lock"] != nil {
		t.Errorf("clone %d: %v", newid, clone)
	}

	if err := ct.Template(ctx); err != nil {
		t.Fatalf("template: %v", err)
	}
	tg.eventually("template: 1", func() bool { return tg.config("lxc", id, nil)["template"] == float64(1) })
	if rf := volumeOf(tg.config("lxc", id, nil)["rootfs"]); rf != tg.Storage()+":base-"+itoa(id)+"-disk-0" {
		t.Errorf("template rootfs: %v", rf)
	}
	task, err = ct.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if exit := tg.goTaskFailure(task); !strings.Contains(exit, "you can't start a CT if it's a template") {
		t.Errorf("a template must not start: %q", exit)
	}
	cl, err := c.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cl.Resources(ctx, "vm")
	found := false
	for _, r := range rs {
		if r.ID == "lxc/"+itoa(id) {
			found = r.Type == "lxc" && r.Template == 1
		}
	}
	if err != nil || !found {
		t.Errorf("cluster resources list lxc/%d as a template: %v", id, err)
	}
	for _, gid := range []int{cloneID, id} {
		task, err := node.ContainerRef(gid).Delete(ctx, nil)
		tg.goMust("delete", task, err)
	}
	if _, err := node.Container(ctx, id); !proxmox.IsNotFound(err) {
		t.Errorf("a deleted CT must be not found: %v", err)
	}
}

func hasPending(list []*proxmox.ContainerPending, key, value string) bool {
	for _, p := range list {
		if p.Key == key && fmt.Sprint(p.Pending) == value {
			return true
		}
	}
	return false
}

// create_vm reserves the VMID with lock "create" while vzcreate runs
// (pve-guest-common src/PVE/AbstractConfig.pm create_and_lock_config), so
// a second create of it is 500 "CT N already exists on node '<node>'"
// (check_vmid_unused), and a config write waits for the create's file lock
// and then applies (pve-container src/PVE/API2/LXC/Config.pm update_vm).
// Before forking, create_vm refuses an unknown pool ("pool '<pool>' does
// not exist", RPCEnvironment check_pool_exist) and a rootfs storage
// without rootdir (400 errors.storage "... does not support container
// directories"); status/current omits template for a non-template
// (src/PVE/API2/LXC/Status.pm vm_status); template answers null
// (src/PVE/API2/LXC.pm template); a stale digest is refused (PVE::Tools
// assert_if_modified); a protected CT is not destroyed ("can't remove CT
// N - protection mode enabled", AbstractConfig.pm check_protection).
func TestLXCCreateLockAndErrors(t *testing.T) {
	tg := target(t, pvesim.Options{TaskDurations: map[string]time.Duration{"vzcreate": 300 * time.Millisecond}})
	covers(tg, "POST /nodes/{node}/lxc vmid ostemplate rootfs pool", "PUT /nodes/{node}/lxc/{vmid}/config memory digest protection")
	tmpl := tg.ctTemplate()
	lxcPath := "/nodes/" + url.PathEscape(tg.Node()) + "/lxc"
	id := tg.vmid()
	res := tg.raw(http.MethodPost, lxcPath, Params("vmid", itoa(id), "hostname", tg.GuestName("ctlock"), "pool", tg.Pool(), "ostemplate", tmpl,
		"rootfs", tg.Storage()+":1", "unprivileged", "1"))
	if res.Status != http.StatusOK {
		t.Fatalf("create: %s %s", res.StatusLine, res.Text)
	}
	t.Cleanup(func() { tg.destroy("lxc", id) })
	tg.unprotect("lxc", id)
	if sim, ok := tg.Sim(); ok { // only a create slowed down is surely still running
		if g, _ := sim.Guest(id); g.Lock != "create" {
			t.Errorf("the VMID is reserved with lock create while vzcreate runs: %+v", g)
		}
	}
	again := tg.raw(http.MethodPost, lxcPath, Params("vmid", itoa(id), "ostemplate", tmpl))
	if want := "CT " + itoa(id) + " already exists on node '" + tg.Node() + "'"; again.Status != http.StatusInternalServerError || strings.TrimSpace(again.Message()) != want {
		t.Errorf("taken VMID: %s %q, want %q", again.StatusLine, again.Message(), want)
	}
	put := tg.raw(http.MethodPut, tg.guestPath("lxc", id, "/config"), Params("memory", "256"))
	if cfg := tg.config("lxc", id, nil); put.Status != http.StatusOK || cfg["lock"] != nil || cfg["memory"] != float64(256) {
		t.Errorf("config write during the create: %s %q, then %v", put.StatusLine, put.Message(), cfg)
	}
	if exit := tg.task(res.UPID()); exit != "OK" {
		t.Fatalf("create task: %s", exit)
	}

	other := tg.vmid()
	nope := Prefix + tg.RunID() + "-nope"
	if res := tg.raw(http.MethodPost, lxcPath, Params("vmid", itoa(other), "ostemplate", tmpl, "storage", tg.Storage(), "pool", nope)); res.Status != http.StatusInternalServerError ||
		strings.TrimSpace(res.Message()) != "pool '"+nope+"' does not exist" {
		t.Errorf("unknown pool: %s %q", res.StatusLine, res.Message())
	}
	if _, ok := tg.Sim(); ok { // the default storage "local" holds no rootdir on the simulator; a real one may
		if res := tg.raw(http.MethodPost, lxcPath, Params("vmid", itoa(other), "ostemplate", tmpl)); res.Status != http.StatusBadRequest ||
			!strings.Contains(res.Errors()["storage"], "does not support container directories") {
			t.Errorf("default storage 'local' holds no rootdir: %s %s", res.StatusLine, res.Text)
		}
	}
	if tg.guestExists("lxc", other) {
		t.Error("a refused create must not reserve the VMID")
	}

	if st := tg.raw(http.MethodGet, tg.guestPath("lxc", id, "/status/current"), nil); st.Status != http.StatusOK || strings.Contains(st.Text, `"template"`) {
		t.Errorf("status/current of a non-template must omit template: %s", st.Text)
	}
	if res := tg.raw(http.MethodPut, tg.guestPath("lxc", id, "/config"), Params("digest", "0000", "memory", "256")); res.Status != http.StatusInternalServerError ||
		!strings.Contains(res.Message(), "detected modified configuration") {
		t.Errorf("digest mismatch: %s %q", res.StatusLine, res.Message())
	}
	if res := tg.raw(http.MethodPost, tg.guestPath("lxc", id, "/template"), nil); res.Status != http.StatusOK || string(res.Body["data"]) != "null" {
		t.Errorf("template answers null: %s %s", res.StatusLine, res.Text)
	}
	if res := tg.raw(http.MethodPut, tg.guestPath("lxc", id, "/config"), Params("protection", "1")); res.Status != http.StatusOK {
		t.Fatalf("protection: %s %s", res.StatusLine, res.Text)
	}
	if res := tg.raw(http.MethodDelete, tg.guestPath("lxc", id, ""), nil); res.Status != http.StatusInternalServerError ||
		strings.TrimSpace(res.Message()) != "can't remove CT "+itoa(id)+" - protection mode enabled" {
		t.Errorf("protected delete: %s %q", res.StatusLine, res.Message())
	}
}
