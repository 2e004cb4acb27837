package pvesim_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const debianTemplate = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"

func ctOpt(name string, value any) proxmox.ContainerOption {
	return proxmox.ContainerOption{Name: name, Value: value}
}

// rawConfig reads a container config as a map, the way the provider reads configs.
func rawConfig(ctx context.Context, t *testing.T, c *proxmox.Client, node string, vmid int, query string) map[string]any {
	t.Helper()
	var cfg map[string]any
	if err := c.Get(ctx, fmt.Sprintf("/nodes/%s/lxc/%d/config%s", node, vmid, query), &cfg); err != nil {
		t.Fatalf("config %d: %v", vmid, err)
	}
	return cfg
}

func mustWait(t *testing.T, c *proxmox.Client, what string, task *proxmox.Task, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := waitTask(t, c, task); err != nil {
		t.Fatalf("%s task: %v", what, err)
	}
}

func TestLXCLifecycleWithGoProxmox(t *testing.T) {
	sim := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"vztemplate": 150 * time.Millisecond}})
	if err := sim.AddVolume("pve", debianTemplate); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	node, err := c.Node(ctx, "pve")
	if err != nil {
		t.Fatal(err)
	}

	task, err := node.NewContainer(ctx, 0, ctOpt("ostemplate", debianTemplate), ctOpt("rootfs", "local-lvm:8"),
		ctOpt("hostname", "ct1"), ctOpt("memory", 1024), ctOpt("cores", 2), ctOpt("password", "s3cret-pass"),
		ctOpt("net0", "name=eth0,bridge=vmbr0,ip=dhcp"))
	mustWait(t, c, "create", task, err)

	ct, err := node.Container(ctx, 100)
	if err != nil {
		t.Fatalf("container handle: %v", err)
	}
	cc := ct.ContainerConfig
	if cc.Memory == nil || *cc.Memory != 1024 || cc.Cores != 2 || cc.Hostname != "ct1" || cc.RootFS != "local-lvm:vm-100-disk-0,size=8G" {
		t.Fatalf("config after create: %+v", cc)
	}
	raw := rawConfig(ctx, t, c, "pve", 100, "")
	if _, leaked := raw["password"]; leaked {
		t.Fatal("password must never be echoed back")
	}
	if _, isNum := raw["memory"].(float64); !isNum {
		t.Fatalf("LXC memory must be a JSON number, got %T", raw["memory"])
	}
	if net0, _ := raw["net0"].(string); !strings.HasPrefix(net0, "name=eth0,") || !strings.Contains(net0, "hwaddr=BC:24:11:") {
		t.Fatalf("net0 %q", net0)
	}

	// PUT config is synchronous: go-proxmox hands back a nil task.
	cfgTask, err := ct.Config(ctx, ctOpt("description", "managed"))
	if err != nil || cfgTask != nil {
		t.Fatalf("config PUT: task %v err %v", cfgTask, err)
	}

	task, err = ct.Start(ctx)
	mustWait(t, c, "start", task, err)
	if _, err := ct.Start(ctx); err == nil || !strings.Contains(err.Error(), "CT 100 already running") {
		t.Fatalf("second start: %v", err)
	}

	// On a running container a non-hotpluggable key waits in pending; memory applies at once.
	if _, err := ct.Config(ctx, ctOpt("features", "nesting=1"), ctOpt("memory", 2048)); err != nil {
		t.Fatal(err)
	}
	pending, err := ct.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !hasPending(pending, "features", "nesting=1") {
		t.Fatalf("features must be pending on a running CT: %+v", pending)
	}
	if cur := rawConfig(ctx, t, c, "pve", 100, "?current=1"); cur["features"] != nil || cur["memory"] != float64(2048) {
		t.Fatalf("current config: %v", cur)
	}

	ifaces, err := ct.Interfaces(ctx)
	if err != nil || len(ifaces) != 2 || ifaces[0].Name != "lo" || ifaces[1].Name != "eth0" || ifaces[1].Inet == "" {
		t.Fatalf("interfaces: %v %+v", err, ifaces)
	}

	task, err = ct.Reboot(ctx)
	mustWait(t, c, "reboot", task, err)
	if cur := rawConfig(ctx, t, c, "pve", 100, "?current=1"); cur["features"] != "nesting=1" {
		t.Fatalf("reboot must apply pending: %v", cur)
	}

	if _, err := node.ContainerRef(100).Delete(ctx, nil); err == nil || !strings.Contains(err.Error(), "container is running") {
		t.Fatalf("delete of running CT: %v", err)
	}
	task, err = ct.Shutdown(ctx, true, 30)
	mustWait(t, c, "shutdown", task, err)
	// A stopped CT has no interfaces: data null (pve-container src/PVE/API2/LXC.pm, get_interfaces).
	if ifs, err := ct.Interfaces(ctx); err != nil || len(ifs) != 0 {
		t.Fatalf("interfaces of a stopped CT: %v %v", ifs, err)
	}

	task, err = ct.Resize(ctx, "rootfs", "+2G")
	mustWait(t, c, "grow", task, err)
	if rf := rawConfig(ctx, t, c, "pve", 100, "")["rootfs"]; rf != "local-lvm:vm-100-disk-0,size=10G" {
		t.Fatalf("rootfs after grow: %v", rf)
	}
	// pve-container checks the size before it forks: a shrink is refused synchronously.
	if _, err := ct.Resize(ctx, "rootfs", "4G"); err == nil || !strings.Contains(err.Error(), "unable to shrink disk size") {
		t.Fatalf("shrink: %v", err)
	}
	if _, err := ct.Resize(ctx, "rootfs", "10G"); err == nil || !strings.Contains(err.Error(), "disk is already at specified size") {
		t.Fatalf("same size: %v", err)
	}

	task, err = ct.NewSnapshot(ctx, "before")
	mustWait(t, c, "snapshot", task, err)
	snaps, err := ct.Snapshots(ctx)
	if err != nil || len(snaps) != 2 || snaps[0].Name != "before" || snaps[1].Name != "current" || snaps[1].Parent != "before" {
		t.Fatalf("snapshots: %v %+v", err, snaps)
	}
	if err := ct.Template(ctx); err == nil || !strings.Contains(err.Error(), "contains snapshots") {
		t.Fatalf("template with snapshots: %v", err)
	}
	task, err = ct.Snapshot("before").Delete(ctx)
	mustWait(t, c, "delete snapshot", task, err)

	newid, task, err := ct.Clone(ctx, &proxmox.ContainerCloneOptions{Hostname: "ct2"})
	mustWait(t, c, "clone", task, err)
	clone := rawConfig(ctx, t, c, "pve", newid, "")
	if newid != 101 || clone["hostname"] != "ct2" || clone["rootfs"] != "local-lvm:vm-101-disk-0,size=10G" || clone["lock"] != nil {
		t.Fatalf("clone %d: %v", newid, clone)
	}

	// Template() returns no task: the worker runs on, so poll the config.
	if err := ct.Template(ctx); err != nil {
		t.Fatalf("template: %v", err)
	}
	eventually(t, "template: 1", func() bool {
		return rawConfig(ctx, t, c, "pve", 100, "")["template"] == float64(1)
	})
	if err := ct.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if rf := rawConfig(ctx, t, c, "pve", 100, "")["rootfs"]; rf != "local-lvm:base-100-disk-0,size=10G" {
		t.Fatalf("template rootfs: %v", rf)
	}
	task, err = ct.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitTask(t, c, task); !proxmox.IsTaskFailed(err) || !strings.Contains(err.Error(), "you can't start a CT if it's a template") {
		t.Fatalf("a template must not start (a vzstart task failure): %v", err)
	}

	cl, err := c.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cl.Resources(ctx, "vm")
	if err != nil || len(rs) != 2 || rs[0].Type != "lxc" || rs[0].ID != "lxc/100" || rs[0].Template != 1 {
		t.Fatalf("cluster resources: %v %+v", err, rs)
	}

	for _, id := range []int{101, 100} {
		task, err := node.ContainerRef(id).Delete(ctx, nil)
		mustWait(t, c, "delete", task, err)
	}
	if _, err := node.Container(ctx, 100); !proxmox.IsNotFound(err) {
		t.Fatalf("deleted CT must be not found: %v", err)
	}
	if g := sim.Guests(); len(g) != 0 {
		t.Fatalf("guests left: %+v", g)
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

func TestLXCCreateLockAndErrors(t *testing.T) {
	sim := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"vzcreate": 300 * time.Millisecond}})
	if err := sim.AddVolume("pve", debianTemplate); err != nil {
		t.Fatal(err)
	}
	h := tokenHeader()
	res := rawCall(t, sim, http.MethodPost, "/nodes/pve/lxc", "application/x-www-form-urlencoded",
		form("vmid", "200", "ostemplate", debianTemplate, "rootfs", "local-lvm:4", "unprivileged", "1"), h)
	if res.Status != 200 {
		t.Fatalf("create: %d %s", res.Status, res.Text)
	}
	g, ok := sim.Guest(200)
	if !ok || g.Lock != "create" {
		t.Fatalf("the VMID is reserved with lock create while vzcreate runs: %+v", g)
	}
	res = rawCall(t, sim, http.MethodPost, "/nodes/pve/lxc", "application/x-www-form-urlencoded",
		form("vmid", "200", "ostemplate", debianTemplate), h)
	if res.Status != 500 || res.message() != "CT 200 already exists on node 'pve'\n" {
		t.Fatalf("taken VMID: %d %q", res.Status, res.message())
	}
	// update_vm waits for the create's config file lock (see conformance_locks_test.go),
	// then finds the lock property gone and applies.
	res = rawCall(t, sim, http.MethodPut, "/nodes/pve/lxc/200/config", "application/x-www-form-urlencoded", form("memory", "256"), h)
	if g, _ := sim.Guest(200); res.Status != 200 || g.Lock != "" || g.Config["memory"] != "256" {
		t.Fatalf("config write during the create: %d %q, then lock %q memory %q", res.Status, res.message(), g.Lock, g.Config["memory"])
	}

	// A missing or wrong ostemplate: conformance_lxc_create_test.go.
	res = rawCall(t, sim, http.MethodPost, "/nodes/pve/lxc", "application/x-www-form-urlencoded",
		form("vmid", "201", "ostemplate", debianTemplate), h)
	if res.Status != 400 || !strings.Contains(res.errors()["storage"], "does not support container directories") {
		t.Fatalf("default storage 'local' holds no rootdir: %d %s", res.Status, res.Text)
	}
	res = rawCall(t, sim, http.MethodPost, "/nodes/pve/lxc", "application/x-www-form-urlencoded",
		form("vmid", "201", "ostemplate", debianTemplate, "storage", "local-lvm", "pool", "nope"), h)
	if res.Status != 500 || res.message() != "pool 'nope' does not exist\n" {
		t.Fatalf("unknown pool: %d %q", res.Status, res.message())
	}
	if _, ok := sim.Guest(201); ok {
		t.Fatal("a refused create must not reserve the VMID")
	}

	res = rawCall(t, sim, http.MethodGet, "/nodes/pve/lxc/200/status/current", "", "", h)
	if res.Status != 200 || strings.Contains(res.Text, `"template"`) {
		t.Fatalf("status/current of a non-template must omit template: %s", res.Text)
	}
	res = rawCall(t, sim, http.MethodPost, "/nodes/pve/lxc/200/template", "", "", h)
	if res.Status != 200 || string(res.Body["data"]) != "null" {
		t.Fatalf("template answers null: %d %s", res.Status, res.Text)
	}
	res = rawCall(t, sim, http.MethodPut, "/nodes/pve/lxc/200/config", "application/x-www-form-urlencoded",
		form("digest", "0000", "memory", "256"), h)
	if res.Status != 500 || !strings.Contains(res.message(), "detected modified configuration") {
		t.Fatalf("digest mismatch: %d %q", res.Status, res.message())
	}
	res = rawCall(t, sim, http.MethodPut, "/nodes/pve/lxc/200/config", "application/x-www-form-urlencoded",
		form("protection", "1"), h)
	if res.Status != 200 {
		t.Fatalf("protection: %d %s", res.Status, res.Text)
	}
	res = rawCall(t, sim, http.MethodDelete, "/nodes/pve/lxc/200", "", "", h)
	if res.Status != 500 || res.message() != "can't remove CT 200 - protection mode enabled\n" {
		t.Fatalf("protected delete: %d %q", res.Status, res.message())
	}
}

func TestLXCTemplateClonesAndTargets(t *testing.T) {
	sim := startSim(t, pvesim.Options{Nodes: []string{"pve", "other"}, SharedStorage: "shared",
		TaskDurations: map[string]time.Duration{"vzclone": 200 * time.Millisecond}})
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	for _, seed := range []pvesim.GuestSeed{
		{Kind: "lxc", Node: "pve", VMID: 9100, Template: true, Config: map[string]string{"hostname": "tmpl-local", "rootfs": "local-lvm:2", "net0": "name=eth0,bridge=vmbr0,ip=dhcp"}},
		{Kind: "lxc", Node: "pve", VMID: 9200, Template: true, Config: map[string]string{"hostname": "tmpl-shared", "rootfs": "shared:2"}},
	} {
		if err := sim.AddGuest(seed); err != nil {
			t.Fatal(err)
		}
	}
	tmpl := c.NodeRef("pve").ContainerRef(9100)

	// pve-container locks the source with 'disk' for the whole clone and writes the new
	// config at once, locked 'create': a second clone of the same template is refused.
	_, first, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: 201, Hostname: "web201"})
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := sim.Guest(201); !ok || g.Lock != "create" || g.Config["hostname"] != "web201" || g.Config["rootfs"] != "" {
		t.Fatalf("new config during vzclone: %+v", g)
	}
	if g, _ := sim.Guest(9100); g.Lock != "disk" {
		t.Fatalf("source lock during vzclone: %q", g.Lock)
	}
	if _, _, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: 202}); err == nil || !strings.Contains(err.Error(), "CT is locked (disk)") {
		t.Fatalf("parallel clone of one CT: %v", err)
	}
	if err := waitTask(t, c, first); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{202, 203} {
		_, task, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: id, Hostname: fmt.Sprintf("web%d", id)})
		mustWait(t, c, "clone", task, err)
	}
	if g, _ := sim.Guest(9100); g.Lock != "" {
		t.Fatalf("template still locked: %q", g.Lock)
	}
	for _, id := range []int{201, 202, 203} {
		cfg := rawConfig(ctx, t, c, "pve", id, "")
		if cfg["hostname"] != fmt.Sprintf("web%d", id) || cfg["rootfs"] != fmt.Sprintf("local-lvm:vm-%d-disk-0,size=2G", id) || cfg["template"] != nil || cfg["lock"] != nil {
			t.Fatalf("clone %d config: %v", id, cfg)
		}
		if net0, _ := cfg["net0"].(string); !strings.Contains(net0, fmt.Sprintf("hwaddr=BC:24:11:00:%02X:00", id&0xff)) {
			t.Fatalf("clone %d keeps the template's MAC: %v", id, net0)
		}
	}
	if _, _, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: 300, Full: true, Storage: "local"}); err != nil {
		t.Fatalf("full clone to a storage without rootdir is refused by the task, not the request: %v", err)
	}
	eventually(t, "failed clone cleaned up", func() bool { _, ok := sim.Guest(300); return !ok })
	if _, _, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: 202}); err == nil || !strings.Contains(err.Error(), "CT 202 already exists on node 'pve'") {
		t.Fatalf("clone onto a taken VMID: %v", err)
	}
	if _, _, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: 300, Target: "other"}); err == nil || !strings.Contains(err.Error(), "can't clone CT to node 'other' (CT uses local storage)") {
		t.Fatalf("clone of local storage to another node: %v", err)
	}
	_, task, err := c.NodeRef("pve").ContainerRef(9200).Clone(ctx, &proxmox.ContainerCloneOptions{NewID: 300, Target: "other"})
	mustWait(t, c, "clone to other node", task, err)
	if g, ok := sim.Guest(300); !ok || g.Node != "other" || g.Lock != "" || !strings.HasPrefix(g.Config["rootfs"], "shared:") {
		t.Fatalf("clone on other node: %+v", g)
	}
}

func TestLXCConfigPutValidation(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: 150, Running: true, Config: map[string]string{
		"hostname": "c", "rootfs": "local-lvm:2", "memory": "512", "mp0": "local-lvm:1,mp=/data", "tty": "2"}}); err != nil {
		t.Fatal(err)
	}
	h := tokenHeader()
	put := func(kv ...string) rawResponse {
		return rawCall(t, sim, http.MethodPut, "/nodes/pve/lxc/150/config", "application/x-www-form-urlencoded", form(kv...), h)
	}
	if res := put(); res.Status != 500 || res.message() != "no options specified\n" {
		t.Fatalf("empty PUT: %d %q", res.Status, res.message())
	}
	if res := put("delete", "bogus"); res.Status != 400 || res.errors()["delete"] != "unknown option 'bogus'" {
		t.Fatalf("unknown delete: %d %s", res.Status, res.Text)
	}
	if res := put("delete", "memory", "memory", "1024"); res.Status != 400 || !strings.Contains(res.errors()["delete"], "at the same time") {
		t.Fatalf("set and delete: %d %s", res.Status, res.Text)
	}
	if res := put("memory", "true"); res.Status != 400 || res.errors()["memory"] != "type check ('integer') failed - got 'true'" {
		t.Fatalf("type check: %d %s", res.Status, res.Text)
	}
	// Running: tty and the mount point's removal wait in pending; memory and hostname apply at once.
	if res := put("tty", "4", "memory", "1024", "hostname", "c2", "delete", "mp0"); res.Status != 200 {
		t.Fatalf("put: %d %s", res.Status, res.Text)
	}
	g, _ := sim.Guest(150)
	if g.Config["memory"] != "1024" || g.Config["hostname"] != "c2" || g.Pending["tty"] != "4" || g.Config["tty"] != "2" ||
		len(g.PendingDelete) != 1 || g.PendingDelete[0] != "mp0" || g.Config["mp0"] == "" {
		t.Fatalf("after PUT: %+v", g)
	}
	if res := put("revert", "tty"); res.Status != 200 {
		t.Fatalf("revert: %d %s", res.Status, res.Text)
	}
	if g, _ := sim.Guest(150); g.Pending["tty"] != "" {
		t.Fatalf("revert must drop the pending value: %+v", g.Pending)
	}
}

func TestLXCSnapshotFailuresAreTaskFailures(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: 160, Config: map[string]string{"hostname": "s", "rootfs": "local-lvm:2"}}); err != nil {
		t.Fatal(err)
	}
	ct := c.NodeRef("pve").ContainerRef(160)
	if _, err := ct.NewSnapshot(ctx, "current"); err == nil || !strings.Contains(err.Error(), "reserved name") {
		t.Fatalf("reserved name: %v", err)
	}
	task, err := ct.NewSnapshot(ctx, "a")
	mustWait(t, c, "snapshot", task, err)
	for what, call := range map[string]func() (*proxmox.Task, error){
		"snapshot name 'a' already used": func() (*proxmox.Task, error) { return ct.NewSnapshot(ctx, "a") },
		"snapshot 'nope' does not exist": func() (*proxmox.Task, error) { return ct.Snapshot("nope").Rollback(ctx, false) },
	} {
		task, err := call()
		if err != nil {
			t.Fatalf("%s: the request must succeed: %v", what, err)
		}
		if err := waitTask(t, c, task); !proxmox.IsTaskFailed(err) || !strings.Contains(err.Error(), what) {
			t.Fatalf("want task failure %q, got %v", what, err)
		}
	}
	if g, _ := sim.Guest(160); g.Lock != "" || len(g.Snapshots) != 1 {
		t.Fatalf("after failures: %+v", g)
	}
	task, err = ct.Snapshot("a").Rollback(ctx, true)
	mustWait(t, c, "rollback", task, err)
	if g, _ := sim.Guest(160); g.Status != "running" || g.Config["parent"] != "a" {
		t.Fatalf("after rollback with start: %+v", g)
	}
}

func TestLXCFailedCreateReleasesVMID(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddVolume("pve", debianTemplate); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	task, err := c.NodeRef("pve").NewContainer(ctx, 170, ctOpt("ostemplate", debianTemplate), ctOpt("rootfs", "local-lvm:20000"))
	if err != nil {
		t.Fatal(err)
	}
	if err := waitTask(t, c, task); !proxmox.IsTaskFailed(err) || !strings.Contains(err.Error(), "unable to create CT 170 - not enough free space") {
		t.Fatalf("oversized rootfs: %v", err)
	}
	if _, ok := sim.Guest(170); ok {
		t.Fatal("a failed create must remove the config")
	}
	var content []map[string]any
	if err := c.Get(ctx, "/nodes/pve/storage/local-lvm/content", &content); err != nil || len(content) != 0 {
		t.Fatalf("volumes left: %v %v", err, content)
	}
}

func TestLXCPendingMountRemovalBecomesUnusedOnRestart(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: 180, Running: true, Config: map[string]string{
		"hostname": "m", "rootfs": "local-lvm:2", "mp0": "local-lvm:1,mp=/data"}}); err != nil {
		t.Fatal(err)
	}
	ct := c.NodeRef("pve").ContainerRef(180)
	if _, err := ct.Config(ctx, ctOpt("delete", "mp0")); err != nil {
		t.Fatal(err)
	}
	task, err := ct.Reboot(ctx)
	mustWait(t, c, "reboot", task, err)
	g, _ := sim.Guest(180)
	if g.Config["mp0"] != "" || g.Config["unused0"] != "local-lvm:vm-180-disk-0" || len(g.PendingDelete) != 0 {
		t.Fatalf("after reboot: %+v", g.Config)
	}
}
