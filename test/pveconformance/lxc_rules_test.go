package pveconformance

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Clones of a container template (pve-container src/PVE/API2/LXC.pm
// clone_vm): the source is locked "disk" for the whole clone and the new
// config written at once, locked "create", with the hostname and no
// rootfs yet, so a second clone of the same template is refused "CT is
// locked (disk)" (pve-guest-common AbstractConfig.pm check_lock); each
// clone gets its own MAC; a full clone to a storage without rootdir is
// refused by the task, which removes its config; a taken VMID is "CT N
// already exists on node '<node>'"; a clone of local storage to another
// node is "can't clone CT to node '<node>' (CT uses local storage)"; from
// a shared storage it lands on the target node.
func TestLXCTemplateClonesAndTargets(t *testing.T) {
	tg := target(t, pvesim.Options{Nodes: []string{simNode, "other"}, SharedStorage: "shared",
		TaskDurations: map[string]time.Duration{"vzclone": 200 * time.Millisecond}})
	sim := tg.requireSim("reads the locks while a clone runs (Options.TaskDurations) and clones from a shared storage to a second node")
	covers(tg, "POST /nodes/{node}/lxc/{vmid}/clone newid hostname full storage target")
	ctx := tg.ctx()
	local := tg.seedGuest(sim, pvesim.GuestSeed{Kind: "lxc", Template: true, Config: map[string]string{"hostname": "tmpl-local", "rootfs": "local-lvm:2", "net0": "name=eth0,bridge=vmbr0,ip=dhcp"}})
	shared := tg.seedGuest(sim, pvesim.GuestSeed{Kind: "lxc", Template: true, Config: map[string]string{"hostname": "tmpl-shared", "rootfs": "shared:2"}})
	tmpl := tg.goNode().ContainerRef(local)
	ids := []int{tg.vmid(), tg.vmid(), tg.vmid()}
	_, first, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: ids[0], Hostname: fmt.Sprintf("web%d", ids[0])})
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := sim.Guest(ids[0]); !ok || g.Lock != "create" || g.Config["hostname"] != fmt.Sprintf("web%d", ids[0]) || g.Config["rootfs"] != "" {
		t.Errorf("new config during vzclone: %+v", g)
	}
	if g, _ := sim.Guest(local); g.Lock != "disk" {
		t.Errorf("source lock during vzclone: %q", g.Lock)
	}
	if _, _, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: ids[1]}); err == nil || !strings.Contains(err.Error(), "CT is locked (disk)") {
		t.Errorf("parallel clone of one CT: %v", err)
	}
	if err := tg.goWait(first); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[1:] {
		_, task, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: id, Hostname: fmt.Sprintf("web%d", id)})
		tg.goMust("clone", task, err)
	}
	if g, _ := sim.Guest(local); g.Lock != "" {
		t.Errorf("template still locked: %q", g.Lock)
	}
	for _, id := range ids {
		cfg := tg.config("lxc", id, nil)
		if cfg["hostname"] != fmt.Sprintf("web%d", id) || cfg["rootfs"] != fmt.Sprintf("local-lvm:vm-%d-disk-0,size=2G", id) || cfg["template"] != nil || cfg["lock"] != nil {
			t.Errorf("clone %d config: %v", id, cfg)
		}
		if net0, _ := cfg["net0"].(string); !strings.Contains(net0, fmt.Sprintf("hwaddr=BC:24:11:00:%02X:00", id&0xff)) {
			t.Errorf("clone %d keeps the template's MAC: %v", id, net0)
		}
	}
	failing := tg.vmid()
	if _, _, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: failing, Full: true, Storage: "local"}); err != nil {
		t.Fatalf("a full clone to a storage without rootdir is refused by the task, not the request: %v", err)
	}
	tg.eventually("the failed clone cleaned up", func() bool { return !tg.guestExists("lxc", failing) })
	if _, _, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: ids[1]}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("CT %d already exists on node '%s'", ids[1], tg.Node())) {
		t.Errorf("clone onto a taken VMID: %v", err)
	}
	if _, _, err := tmpl.Clone(ctx, &proxmox.ContainerCloneOptions{NewID: failing, Target: "other"}); err == nil || !strings.Contains(err.Error(), "can't clone CT to node 'other' (CT uses local storage)") {
		t.Errorf("clone of local storage to another node: %v", err)
	}
	_, task, err := tg.goNode().ContainerRef(shared).Clone(ctx, &proxmox.ContainerCloneOptions{NewID: failing, Target: "other"})
	tg.goMust("clone to the other node", task, err)
	if g, ok := sim.Guest(failing); !ok || g.Node != "other" || g.Lock != "" || !strings.HasPrefix(g.Config["rootfs"], "shared:") {
		t.Errorf("clone on the other node: %+v", g)
	}
}

// PUT config's checks (pve-container src/PVE/API2/LXC/Config.pm
// update_vm): no key is 500 "no options specified"; delete of an unknown
// key is 400 errors.delete "unknown option '<key>'"; setting and deleting
// one key is 400 errors.delete "... at the same time"; a value of the
// wrong type is 400 "type check ('integer') failed - got '<value>'"
// (src/PVE/LXC/Config.pm check_type). On a running container tty and a
// mount point's removal wait in pending while memory and hostname apply
// (vmconfig_hotplug_pending); revert drops a pending value.
func TestLXCConfigPutValidation(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "PUT /nodes/{node}/lxc/{vmid}/config delete memory tty hostname revert", "GET /nodes/{node}/lxc/{vmid}/pending")
	id := tg.createCT("put", "mp0", tg.Storage()+":1,mp=/data", "tty", "2")
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/status/start"), nil)
	t.Cleanup(func() { tg.destroy("lxc", id) })
	put := func(kv ...string) Response {
		return tg.raw(http.MethodPut, tg.guestPath("lxc", id, "/config"), Params(kv...))
	}
	if res := put(); res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != "no options specified" {
		t.Errorf("empty PUT: %s %q", res.StatusLine, res.Message())
	}
	if res := put("delete", "bogus"); res.Status != http.StatusBadRequest || res.Errors()["delete"] != "unknown option 'bogus'" {
		t.Errorf("unknown delete: %s %s", res.StatusLine, res.Text)
	}
	if res := put("delete", "memory", "memory", "1024"); res.Status != http.StatusBadRequest || !strings.Contains(res.Errors()["delete"], "at the same time") {
		t.Errorf("set and delete: %s %s", res.StatusLine, res.Text)
	}
	if res := put("memory", "true"); res.Status != http.StatusBadRequest || res.Errors()["memory"] != "type check ('integer') failed - got 'true'" {
		t.Errorf("type check: %s %s", res.StatusLine, res.Text)
	}
	if res := put("tty", "4", "memory", "1024", "hostname", tg.GuestName("put2"), "delete", "mp0"); res.Status != http.StatusOK {
		t.Fatalf("PUT: %s %s", res.StatusLine, res.Text)
	}
	var pending []map[string]any
	tg.data(tg.guestPath("lxc", id, "/pending"), nil, &pending)
	byKey := map[string]map[string]any{}
	for _, it := range pending {
		byKey[it["key"].(string)] = it
	}
	if fmt.Sprint(byKey["memory"]["value"]) != "1024" || byKey["memory"]["pending"] != nil || byKey["hostname"]["value"] != tg.GuestName("put2") {
		t.Errorf("memory and hostname apply at once: %v %v", byKey["memory"], byKey["hostname"])
	}
	if fmt.Sprint(byKey["tty"]["pending"]) != "4" || fmt.Sprint(byKey["tty"]["value"]) != "2" || fmt.Sprint(byKey["mp0"]["delete"]) != "1" {
		t.Errorf("tty and the mount point's removal wait: %v %v", byKey["tty"], byKey["mp0"])
	}
	if res := put("revert", "tty"); res.Status != http.StatusOK {
		t.Fatalf("revert: %s %s", res.StatusLine, res.Text)
	}
	var reverted []map[string]any
	tg.data(tg.guestPath("lxc", id, "/pending"), nil, &reverted)
	for _, it := range reverted {
		if it["key"] == "tty" && it["pending"] != nil {
			t.Errorf("revert must drop the pending value: %v", it)
		}
	}
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/status/stop"), nil)
}

// Snapshot failures (pve-container src/PVE/API2/LXC/Snapshot.pm snapshot,
// rollback; pve-guest-common AbstractConfig.pm snapshot_prepare,
// snapshot_rollback): the reserved name "current" is refused by the
// request; a used name ("snapshot name '<name>' already used") and a
// missing snapshot ("snapshot '<name>' does not exist") fail the task and
// leave no lock; a rollback with start=1 starts the container, its parent
// the snapshot.
func TestLXCSnapshotFailuresAreTaskFailures(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/lxc/{vmid}/snapshot snapname", "POST /nodes/{node}/lxc/{vmid}/snapshot/{snapname}/rollback start")
	ctx := tg.ctx()
	id := tg.createCT("snapfail")
	ct := tg.goNode().ContainerRef(id)
	if _, err := ct.NewSnapshot(ctx, "current"); err == nil || !strings.Contains(err.Error(), "reserved name") {
		t.Errorf("reserved name: %v", err)
	}
	task, err := ct.NewSnapshot(ctx, "a")
	tg.goMust("snapshot", task, err)
	for what, call := range map[string]func() (*proxmox.Task, error){
		"snapshot name 'a' already used": func() (*proxmox.Task, error) { return ct.NewSnapshot(ctx, "a") },
		"snapshot 'nope' does not exist": func() (*proxmox.Task, error) { return ct.Snapshot("nope").Rollback(ctx, false) },
	} {
		task, err := call()
		if err != nil {
			t.Fatalf("%s: the request must succeed: %v", what, err)
		}
		if exit := tg.goTaskFailure(task); !strings.Contains(exit, what) {
			t.Errorf("want the task failure %q, got %q", what, exit)
		}
	}
	cfg := tg.config("lxc", id, nil)
	var snaps []map[string]any
	tg.data(tg.guestPath("lxc", id, "/snapshot"), nil, &snaps)
	if cfg["lock"] != nil || len(snaps) != 2 {
		t.Errorf("after the failures: lock %v, snapshots %v", cfg["lock"], snaps)
	}
	task, err = ct.Snapshot("a").Rollback(ctx, true)
	tg.goMust("rollback", task, err)
	t.Cleanup(func() { tg.destroy("lxc", id) }) // stopped first, before createCT's
	if st, cfg := tg.status("lxc", id), tg.config("lxc", id, nil); st["status"] != "running" || cfg["parent"] != "a" {
		t.Errorf("after a rollback with start: %v, parent %v", st["status"], cfg["parent"])
	}
}

// A create whose worker fails ends "unable to create CT N - <error>" and
// removes the config and the volumes it allocated (pve-container
// src/PVE/API2/LXC.pm create_vm: destroy_config, and the allocated volumes
// freed on error); an oversized rootfs fails allocation ("not enough free
// space", pve-storage src/PVE/Storage/LVMPlugin.pm alloc_image).
func TestLXCFailedCreateReleasesVMID(t *testing.T) {
	tg := target(t, pvesim.Options{})
	tg.requireSim("a rootfs larger than the storage: on a real one its free space and thin provisioning decide whether it fails")
	covers(tg, "POST /nodes/{node}/lxc vmid ostemplate rootfs")
	ctx := tg.ctx()
	id := tg.vmid()
	task, err := tg.goNode().NewContainer(ctx, id, ctOpt("ostemplate", tg.ctTemplate()), ctOpt("rootfs", tg.Storage()+":20000"), ctOpt("pool", tg.Pool()), ctOpt("hostname", tg.GuestName("huge")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.destroy("lxc", id) })
	if exit := tg.goTaskFailure(task); !strings.Contains(exit, "unable to create CT "+itoa(id)+" - not enough free space") {
		t.Errorf("oversized rootfs: %q", exit)
	}
	if tg.guestExists("lxc", id) {
		t.Error("a failed create must remove the config")
	}
	var content []map[string]any
	tg.data(tg.storagePath(tg.Storage(), "/content"), Params("vmid", itoa(id)), &content)
	if len(content) != 0 {
		t.Errorf("volumes left: %v", content)
	}
}

// A mount point removed while the container runs is detached at the next
// start: it becomes unused<n> (pve-container src/PVE/LXC/Config.pm
// vmconfig_apply_pending: add_unused_volume), not destroyed.
func TestLXCPendingMountRemovalBecomesUnusedOnRestart(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "PUT /nodes/{node}/lxc/{vmid}/config delete", "POST /nodes/{node}/lxc/{vmid}/status/reboot")
	ctx := tg.ctx()
	id := tg.createCT("mount", "mp0", tg.Storage()+":1,mp=/data")
	mp := volumeOf(tg.config("lxc", id, nil)["mp0"])
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/status/start"), nil)
	t.Cleanup(func() { tg.destroy("lxc", id) })
	ct := tg.goNode().ContainerRef(id)
	if _, err := ct.Config(ctx, ctOpt("delete", "mp0")); err != nil {
		t.Fatal(err)
	}
	task, err := ct.Reboot(ctx)
	tg.goMust("reboot", task, err)
	cfg := tg.config("lxc", id, nil)
	if cfg["mp0"] != nil || cfg["unused0"] != mp {
		t.Errorf("after the reboot: mp0 %v, unused0 %v, want %s unused", cfg["mp0"], cfg["unused0"], mp)
	}
	tg.mustTask(http.MethodPost, tg.guestPath("lxc", id, "/status/stop"), nil)
}
