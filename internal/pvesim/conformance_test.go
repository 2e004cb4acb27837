package pvesim_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func nodeOf(t *testing.T, c *proxmox.Client, name string) *proxmox.Node {
	t.Helper()
	n, err := c.Node(testCtx(t), name)
	if err != nil {
		t.Fatalf("node %s: %v", name, err)
	}
	return n
}

func vmOf(t *testing.T, c *proxmox.Client, node string, vmid int) *proxmox.VirtualMachine {
	t.Helper()
	vm, err := nodeOf(t, c, node).VirtualMachine(testCtx(t), vmid)
	if err != nil {
		t.Fatalf("vm %d: %v", vmid, err)
	}
	return vm
}

// getData GETs a path with the token and returns the raw "data" value decoded generically.
func getData(t *testing.T, sim *pvesim.Server, path string) any {
	t.Helper()
	res := rawCall(t, sim, http.MethodGet, path, "", "", tokenHeader())
	if res.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, res.Status, res.Text)
	}
	var v any
	if err := json.Unmarshal(res.Body["data"], &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func getMap(t *testing.T, sim *pvesim.Server, path string) map[string]any {
	t.Helper()
	m, ok := getData(t, sim, path).(map[string]any)
	if !ok {
		t.Fatalf("GET %s: not an object", path)
	}
	return m
}

func apiErr(t *testing.T, err error) *proxmox.APIError {
	t.Helper()
	var ae *proxmox.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want *APIError, got %v", err)
	}
	return ae
}

func wantTaskFailure(t *testing.T, c *proxmox.Client, task *proxmox.Task, wantMsg string) {
	t.Helper()
	err := waitTask(t, c, task)
	if !proxmox.IsTaskFailed(err) {
		t.Fatalf("want failed task %q, got %v", wantMsg, err)
	}
	var tfe *proxmox.TaskFailedError
	errors.As(err, &tfe)
	if tfe.ExitStatus != wantMsg {
		t.Fatalf("exit status %q, want %q", tfe.ExitStatus, wantMsg)
	}
	log, err := task.Log(testCtx(t), 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	if last := log[len(log)-1]; last != "TASK ERROR: "+wantMsg {
		t.Fatalf("last log line %q, want the exit status after \"TASK ERROR: \"", last)
	}
}

// create_vm reserves the VMID with a config locked "create" before forking
// (qemu-server src/PVE/API2/Qemu.pm, create_vm: create_and_lock_config).
func TestCreateReservesVMIDAndLocksUntilDisksExist(t *testing.T) {
	sim := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmcreate": 400 * time.Millisecond}})
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	cl, err := c.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := cl.NextID(ctx)
	if err != nil || id != 100 {
		t.Fatalf("nextid %d %v", id, err)
	}
	task, err := nodeOf(t, c, "pve").NewVirtualMachine(ctx, id,
		proxmox.VirtualMachineOption{Name: "name", Value: "web-1"},
		proxmox.VirtualMachineOption{Name: "memory", Value: 2048},
		proxmox.VirtualMachineOption{Name: "cores", Value: 2},
		proxmox.VirtualMachineOption{Name: "scsi0", Value: "local-lvm:8,ssd=1"},
		proxmox.VirtualMachineOption{Name: "ide2", Value: "local-lvm:cloudinit"},
		proxmox.VirtualMachineOption{Name: "net0", Value: "virtio,bridge=vmbr0"},
		proxmox.VirtualMachineOption{Name: "agent", Value: "1"},
		proxmox.VirtualMachineOption{Name: "onboot", Value: true},
	)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	during := getMap(t, sim, "/nodes/pve/qemu/100/config")
	if during["lock"] != "create" || len(during) != 2 {
		t.Fatalf("config during create: %v", during)
	}
	if next, _ := cl.NextID(ctx); next != 101 {
		t.Fatalf("create must reserve the VMID at request time, nextid=%d", next)
	}
	if err := waitTask(t, c, task); err != nil {
		t.Fatalf("create task: %v", err)
	}
	cfg := getMap(t, sim, "/nodes/pve/qemu/100/config")
	if cfg["memory"] != "2048" || cfg["agent"] != "1" || cfg["cores"] != float64(2) || cfg["onboot"] != float64(1) {
		t.Fatalf("wire types: memory=%#v agent=%#v cores=%#v onboot=%#v", cfg["memory"], cfg["agent"], cfg["cores"], cfg["onboot"])
	}
	if cfg["scsi0"] != "local-lvm:vm-100-disk-0,size=8G,ssd=1" || !strings.HasPrefix(cfg["net0"].(string), "virtio=BC:24:11:") {
		t.Fatalf("disks/nics: %v %v", cfg["scsi0"], cfg["net0"])
	}
	if _, locked := cfg["lock"]; locked || cfg["digest"] == "" {
		t.Fatalf("lock or digest: %v", cfg)
	}
	if st := getMap(t, sim, "/nodes/pve/qemu/100/status/current"); st["template"] != nil || st["agent"] != float64(1) {
		t.Fatalf("status/current: template %v agent %v", st["template"], st["agent"])
	}
	vm := vmOf(t, c, "pve", 100)
	if vm.Template || vm.Name != "web-1" || vm.VirtualMachineConfig.Agent != "1" {
		t.Fatalf("go-proxmox view: template=%v name=%q agent=%q", vm.Template, vm.Name, vm.VirtualMachineConfig.Agent)
	}

	_, err = nodeOf(t, c, "pve").NewVirtualMachine(ctx, 100)
	if ae := apiErr(t, err); ae.StatusCode != http.StatusInternalServerError || !strings.Contains(ae.Message, "unable to create VM 100 - VM 100 already exists on node 'pve'") {
		t.Fatalf("duplicate create: %v", err)
	}
}

// A create whose worker fails (create_disks finds no ISO) ends as qemu-server's worker
// dies, "unable to create VM N - <error>", and removes the config it reserved.
func TestFailedCreateRemovesConfig(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	c := tokenClient(t, sim)
	task, err := nodeOf(t, c, "pve").NewVirtualMachine(testCtx(t), 150,
		proxmox.VirtualMachineOption{Name: "scsi0", Value: "local-lvm:8"},
		proxmox.VirtualMachineOption{Name: "ide2", Value: "local:iso/missing.iso,media=cdrom"})
	if err != nil {
		t.Fatal(err)
	}
	wantTaskFailure(t, c, task, "unable to create VM 150 - volume local:iso/missing.iso does not exist")
	if _, ok := sim.Guest(150); ok {
		t.Fatal("a failed create must remove its config")
	}
}

// check_storage_access refuses a new disk on a storage that is missing or holds no
// images before forking: an HTTP 500, no task, no config.
func TestCreateChecksDiskStoragesBeforeForking(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	c := tokenClient(t, sim)
	for value, want := range map[string]string{
		"local:8":   "storage 'local' does not support vm images",
		"nowhere:8": "storage 'nowhere' does not exist",
	} {
		_, err := nodeOf(t, c, "pve").NewVirtualMachine(testCtx(t), 151, proxmox.VirtualMachineOption{Name: "scsi0", Value: value})
		if ae := apiErr(t, err); ae.Status != "500 "+want || ae.Message != want {
			t.Errorf("scsi0=%s: %v, want 500 %q", value, err, want)
		}
		if _, ok := sim.Guest(151); ok {
			t.Fatalf("scsi0=%s: a refused create must leave no config", value)
		}
	}
}

func TestCloneFromTemplate(t *testing.T) {
	sim := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmclone": 400 * time.Millisecond}})
	if err := sim.AddTemplate("pve", 9000, "debian-12"); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	tmpl := vmOf(t, c, "pve", 9000)
	if !tmpl.Template {
		t.Fatal("template not flagged")
	}
	newid, task, err := tmpl.Clone(testCtx(t), &proxmox.VirtualMachineCloneOptions{NewID: 101, Name: "clone-1"})
	if err != nil || newid != 101 {
		t.Fatalf("clone: %d %v", newid, err)
	}
	eventually(t, "placeholder config", func() bool { _, ok := sim.Guest(101); return ok })
	ph := getMap(t, sim, "/nodes/pve/qemu/101/config")
	if ph["lock"] != "clone" || ph["description"] != " qmclone temporary file\n" || ph["name"] != nil {
		t.Fatalf("placeholder: %v", ph)
	}
	if src := getMap(t, sim, "/nodes/pve/qemu/9000/config"); src["lock"] != nil {
		t.Fatalf("a stopped source is only share-locked: %v", src["lock"])
	}
	if err := waitTask(t, c, task); err != nil {
		t.Fatalf("clone task: %v", err)
	}
	cfg := getMap(t, sim, "/nodes/pve/qemu/101/config")
	if cfg["name"] != "clone-1" || cfg["lock"] != nil || cfg["scsi0"] != "local-lvm:base-9000-disk-0/vm-101-disk-0,discard=on,iothread=1,size=8G,ssd=1" {
		t.Fatalf("clone config: %v", cfg)
	}
	if cfg["net0"] == getMap(t, sim, "/nodes/pve/qemu/9000/config")["net0"] {
		t.Fatal("a clone must get its own MAC")
	}
	if task.Type != "qmclone" || task.ID != "9000" {
		t.Fatalf("qmclone task id is the source VMID: %s %s", task.Type, task.ID)
	}
}

func TestParallelClonesOfOneTemplateSucceed(t *testing.T) {
	sim := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmclone": 300 * time.Millisecond}})
	if err := sim.AddTemplate("pve", 9000, "tmpl"); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	tmpl := vmOf(t, c, "pve", 9000)
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, task, err := tmpl.Clone(testCtx(t), &proxmox.VirtualMachineCloneOptions{NewID: 200 + i, Name: fmt.Sprintf("p%d", i)})
			if err == nil {
				err = task.Wait(testCtx(t), 20*time.Millisecond, 30*time.Second)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("clone %d: %v", i, err)
		}
	}
}

func TestCloneThatLosesTheVMIDRaceFailsItsTask(t *testing.T) {
	sim := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmclone": 600 * time.Millisecond}})
	if err := sim.AddTemplate("pve", 9000, "tmpl"); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	tmpl := vmOf(t, c, "pve", 9000)
	ctx := testCtx(t)
	_, first, err := tmpl.Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: 120, Name: "winner"})
	if err != nil {
		t.Fatal(err)
	}
	_, second, err := tmpl.Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: 120, Name: "loser"})
	if err != nil {
		t.Fatalf("the request only checks the config file, which does not exist yet: %v", err)
	}
	// Either worker may take the VMID first; the other one's task fails.
	errFirst, errSecond := waitTask(t, c, first), waitTask(t, c, second)
	winner, loserErr := "winner", errSecond
	if errFirst != nil {
		winner, loserErr = "loser", errFirst
	}
	var tfe *proxmox.TaskFailedError
	if !errors.As(loserErr, &tfe) || tfe.ExitStatus != "unable to create VM 120: config file already exists" || (errFirst != nil && errSecond != nil) {
		t.Fatalf("exactly one clone must fail its task: %v / %v", errFirst, errSecond)
	}
	if g, ok := sim.Guest(120); !ok || g.Config["name"] != winner {
		t.Fatalf("the loser must not remove the winner's config: %+v", g)
	}
	_, _, err = tmpl.Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: 120})
	if ae := apiErr(t, err); ae.Message != "unable to create VM 120: config file already exists" {
		t.Fatalf("sync check: %v", err)
	}
}

func TestCloneRules(t *testing.T) {
	sim := startSim(t, pvesim.Options{Nodes: []string{"pve", "lowtower"}, SharedStorage: "shared"})
	if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 300, Config: map[string]string{"name": "plain", "scsi0": "local-lvm:4"}}); err != nil {
		t.Fatal(err)
	}
	if err := sim.AddTemplate("pve", 9000, "shared-tmpl"); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	plain := vmOf(t, c, "pve", 300)
	_, task, err := plain.Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: 301})
	if err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("clone of a VM: %v", err)
	}
	if g, _ := sim.Guest(301); g.Config["scsi0"] != "local-lvm:vm-301-disk-0,size=4G" || g.Config["name"] != "Copy-of-VM-plain" {
		t.Fatalf("a VM clone is always full: %v", g.Config)
	}
	_, _, err = plain.Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: 302, Target: "lowtower"})
	if ae := apiErr(t, err); ae.Message != "can't clone VM to node 'lowtower' (VM uses local storage)" {
		t.Fatalf("target from local storage: %v", err)
	}
	_, task, err = vmOf(t, c, "pve", 9000).Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: 303, Target: "lowtower", Full: true})
	if err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("clone to another node from shared storage: %v", err)
	}
	if g, _ := sim.Guest(303); g.Node != "lowtower" || !strings.HasPrefix(g.Config["scsi0"], "shared:303/vm-303-disk-0.qcow2") {
		t.Fatalf("cross-node clone: %+v", g)
	}
}

func TestConfigAsyncSyncPendingAndReboot(t *testing.T) {
	sim := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmstart": 300 * time.Millisecond}})
	if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 400, Running: true, Config: map[string]string{
		"name": "run", "cores": "2", "memory": "1024", "scsi0": "local-lvm:4", "net0": "virtio,bridge=vmbr0", "ciuser": "old", "cipassword": "secret1",
	}}); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	vm := vmOf(t, c, "pve", 400)
	task, err := vm.Config(ctx, proxmox.VirtualMachineOption{Name: "cores", Value: 4}, proxmox.VirtualMachineOption{Name: "name", Value: "renamed"},
		proxmox.VirtualMachineOption{Name: "ciuser", Value: "new"})
	if err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("async config: %v", err)
	}
	if err := vm.ConfigSync(ctx, proxmox.VirtualMachineOption{Name: "memory", Value: "4096"}); err != nil {
		t.Fatalf("sync config: %v", err)
	}
	pending, err := vm.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]proxmox.PendingConfigItem{}
	for _, it := range *pending {
		byKey[it.Key] = it
	}
	if byKey["cores"].Pending != float64(4) || byKey["cores"].Value != float64(2) || byKey["memory"].Pending != "4096" {
		t.Fatalf("pending cores/memory: %+v %+v", byKey["cores"], byKey["memory"])
	}
	if byKey["name"].Pending != nil || byKey["name"].Value != "renamed" || byKey["ciuser"].Pending != nil {
		t.Fatalf("name applies live and cloud-init keys never show in /pending: %+v %+v", byKey["name"], byKey["ciuser"])
	}
	if cur := getMap(t, sim, "/nodes/pve/qemu/400/config?current=1"); cur["cores"] != float64(2) {
		t.Fatalf("current=1 cores %v", cur["cores"])
	}
	if def := getMap(t, sim, "/nodes/pve/qemu/400/config"); def["cores"] != float64(4) || def["cipassword"] != "**********" {
		t.Fatalf("default config applies pending: %v", def)
	}
	ci, err := vm.CloudInitPending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ciByKey := map[string]*proxmox.VirtualMachineCloudInitPending{}
	for _, it := range ci {
		ciByKey[it.Key] = it
	}
	if it := ciByKey["ciuser"]; it == nil || it.Value != "old" || it.Pending != "new" {
		t.Fatalf("cloudinit pending: %+v", ci)
	}
	if it := ciByKey["cipassword"]; it == nil || it.Value != "**********" {
		t.Fatalf("cipassword masked: %+v", it)
	}

	task, err = vm.Reboot(ctx)
	if err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("reboot: %v", err)
	}
	if g, _ := sim.Guest(400); g.Status != "stopped" {
		t.Fatalf("the reboot task ends with the VM stopped, got %s", g.Status)
	}
	eventually(t, "qmstart after reboot", func() bool { g, _ := sim.Guest(400); return g.Status == "running" })
	g, _ := sim.Guest(400)
	if g.Config["cores"] != "4" || g.Config["memory"] != "4096" || len(g.Pending) != 0 {
		t.Fatalf("pending applied by the start: %+v", g)
	}
	ci, _ = vm.CloudInitPending(ctx)
	for _, it := range ci {
		if it.Pending != "" {
			t.Fatalf("cloud-init pending after start: %+v", it)
		}
	}

	err = vm.ConfigSync(ctx, proxmox.VirtualMachineOption{Name: "digest", Value: "0123456789abcdef"}, proxmox.VirtualMachineOption{Name: "cores", Value: 1})
	if ae := apiErr(t, err); ae.Message != "detected modified configuration - file changed by other user? Try again." {
		t.Fatalf("digest: %v", err)
	}
	if err := sim.SetGuestConfig(400, "lock", "clone"); err != nil {
		t.Fatal(err)
	}
	err = vm.ConfigSync(ctx, proxmox.VirtualMachineOption{Name: "cores", Value: 1})
	if ae := apiErr(t, err); ae.Message != "VM is locked (clone)" {
		t.Fatalf("lock: %v", err)
	}
}

func TestSnapshotsTemplateAndDelete(t *testing.T) {
	sim := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmsnapshot": 300 * time.Millisecond}})
	_ = sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 700, Running: true, Config: map[string]string{"name": "s", "scsi0": "local-lvm:4", "protection": "1"}})
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	vm := vmOf(t, c, "pve", 700)

	task, err := vm.NewSnapshot(ctx, "before")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "snapshot lock", func() bool { g, _ := sim.Guest(700); return g.Lock == "snapshot" })
	if err := waitTask(t, c, task); err != nil {
		t.Fatal(err)
	}
	snaps, err := vm.Snapshots(ctx)
	if err != nil || len(snaps) != 2 || snaps[0].Name != "before" || snaps[1].Name != "current" || snaps[1].Description != "You are here!" || snaps[1].Parent != "before" {
		t.Fatalf("snapshots: %v %+v", err, snaps)
	}
	_, err = vm.NewSnapshot(ctx, "current")
	if ae := apiErr(t, err); ae.Message != "unable to use snapshot name 'current' (reserved name)" {
		t.Fatalf("reserved: %v", err)
	}
	if err := vm.ConfigSync(ctx, proxmox.VirtualMachineOption{Name: "description", Value: "after"}); err != nil {
		t.Fatal(err)
	}
	task, err = vm.Snapshot("before").Rollback(ctx)
	if err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("rollback: %v", err)
	}
	if g, _ := sim.Guest(700); g.Config["description"] != "" || g.Status != "stopped" {
		t.Fatalf("rollback restores the config and stops a VM without vmstate: %+v", g)
	}
	_, err = vm.ConvertToTemplate(ctx)
	if ae := apiErr(t, err); ae.Message != "unable to create template, because VM contains snapshots" {
		t.Fatalf("template with snapshots: %v", err)
	}
	task, err = vm.Snapshot("before").Delete(ctx)
	if err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("delete snapshot: %v", err)
	}

	task, _ = vm.Start(ctx)
	_ = waitTask(t, c, task)
	_, err = vm.ConvertToTemplate(ctx)
	if ae := apiErr(t, err); ae.Message != "you can't convert a VM to template if VM is running" {
		t.Fatalf("template of a running VM: %v", err)
	}
	_, err = vm.Delete(ctx, nil)
	if ae := apiErr(t, err); ae.Message != "VM 700 is running - destroy failed" {
		t.Fatalf("destroy running: %v", err)
	}
	task, _ = vm.Stop(ctx)
	_ = waitTask(t, c, task)
	_, err = vm.Delete(ctx, nil)
	if ae := apiErr(t, err); ae.Message != "can't remove VM 700 - protection mode enabled" {
		t.Fatalf("destroy protected: %v", err)
	}
	if err := vm.ConfigSync(ctx, proxmox.VirtualMachineOption{Name: "delete", Value: "protection"}); err != nil {
		t.Fatal(err)
	}
	task, err = vm.ConvertToTemplate(ctx)
	if err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("template: %v", err)
	}
	if st := getMap(t, sim, "/nodes/pve/qemu/700/status/current"); st["template"] != float64(1) {
		t.Fatalf("template flag: %v", st["template"])
	}
	vm = vmOf(t, c, "pve", 700)
	task, err = vm.Delete(ctx, &proxmox.VirtualMachineDeleteOptions{Purge: true})
	if err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = nodeOf(t, c, "pve").VirtualMachine(ctx, 700)
	if ae := apiErr(t, err); ae.StatusCode != http.StatusInternalServerError || ae.Message != "Configuration file 'nodes/pve/qemu-server/700.conf' does not exist" || !proxmox.IsNotFound(err) {
		t.Fatalf("after delete: %v", err)
	}
}

func TestGuestAgentErrorsThenAnswers(t *testing.T) {
	sim := startSim(t, pvesim.Options{AgentStartDelay: 300 * time.Millisecond})
	_ = sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 150, Config: map[string]string{"net0": "virtio,bridge=vmbr0", "agent": "enabled=1"}})
	_ = sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 151, Running: true})
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	_, err := vmOf(t, c, "pve", 151).AgentOsInfo(ctx)
	if ae := apiErr(t, err); ae.Message != "No QEMU guest agent configured" {
		t.Fatalf("no agent: %v", err)
	}
	vm := vmOf(t, c, "pve", 150)
	_, err = vm.AgentGetNetworkIFaces(ctx)
	if ae := apiErr(t, err); ae.Message != "VM 150 is not running" {
		t.Fatalf("stopped: %v", err)
	}
	task, _ := vm.Start(ctx)
	if err := waitTask(t, c, task); err != nil {
		t.Fatal(err)
	}
	_, err = vm.AgentGetNetworkIFaces(ctx)
	if ae := apiErr(t, err); ae.Message != "QEMU guest agent is not running" {
		t.Fatalf("agent starting: %v", err)
	}
	time.Sleep(350 * time.Millisecond)
	raw := getMap(t, sim, "/nodes/pve/qemu/150/agent/network-get-interfaces")["result"].([]any)
	if raw[0].(map[string]any)["name"] != "lo" {
		t.Fatalf("lo first: %v", raw)
	}
	ifaces, err := vm.AgentGetNetworkIFaces(ctx)
	if err != nil || len(ifaces) != 1 || ifaces[0].IPAddresses[0].IPAddress != "10.0.0.150" || ifaces[0].HardwareAddress != "bc:24:11:00:96:00" {
		t.Fatalf("interfaces: %v %+v", err, ifaces)
	}
}

func TestGoProxmoxTraps(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	_ = sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 100, Config: map[string]string{"name": "t"}})
	c := tokenClient(t, sim)
	ctx := testCtx(t)

	res := rawCall(t, sim, http.MethodGet, "/cluster/nextid", "", "", tokenHeader())
	if string(res.Body["data"]) != `"101"` {
		t.Fatalf("nextid must be a string: %s", res.Body["data"])
	}
	res = rawCall(t, sim, http.MethodGet, "/cluster/nextid?vmid=100", "", "", tokenHeader())
	if res.Status != 400 || res.errors()["vmid"] != "VM 100 already exists" {
		t.Fatalf("nextid check: %d %s", res.Status, res.Text)
	}
	if list := getData(t, sim, "/nodes/pve/qemu").([]any); list[0].(map[string]any)["template"] != nil {
		t.Fatalf("template must be absent for VMs in /qemu: %v", list[0])
	}
	vm := vmOf(t, c, "pve", 100)
	task, err := vm.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if parts := strings.Split(string(task.UPID), ":"); len(parts) != 9 || parts[8] != "" || parts[7] != testTokenID {
		t.Fatalf("UPID %q", task.UPID)
	}
	_ = waitTask(t, c, task)
	st := getMap(t, sim, "/nodes/pve/tasks/"+string(task.UPID)+"/status")
	if st["starttime"] == nil || st["pid"] == nil || st["user"] != testUser || st["tokenid"] != "kubemox" || st["exitstatus"] != "OK" {
		t.Fatalf("task status: %v", st)
	}
	if _, isNum := st["starttime"].(float64); !isNum {
		t.Fatalf("starttime must be a JSON number: %#v", st["starttime"])
	}
	tasks, err := nodeOf(t, c, "pve").Tasks(ctx, nil)
	if err != nil || len(tasks) == 0 || tasks[0].EndTime.IsZero() {
		t.Fatalf("task list with endtime: %v %+v", err, tasks)
	}
	logs, err := task.Log(ctx, 0, 50)
	if err != nil || logs[len(logs)-1] != "TASK OK" {
		t.Fatalf("log: %v %v", err, logs)
	}
	nilTask, err := vm.Config(ctx, proxmox.VirtualMachineOption{Name: "background_delay", Value: 5}, proxmox.VirtualMachineOption{Name: "name", Value: "quick"})
	if err != nil || nilTask != nil {
		t.Fatalf("background_delay gives data null, so a nil task: %v %v", nilTask, err)
	}
	res = rawCall(t, sim, http.MethodGet, "/nodes/pve/tasks/UPID:pve:0:0:0:x:y:z:/status", "", "", tokenHeader())
	if res.Status != 400 || res.errors()["upid"] != "unable to parse worker upid" {
		t.Fatalf("malformed upid: %d %s", res.Status, res.Text)
	}
	res = rawCall(t, sim, http.MethodGet, "/nodes/pve/tasks/UPID:pve:00001234:00005678:6700AABB:qmstart:100:root@pam:/status", "", "", tokenHeader())
	if res.Status != 400 || res.errors()["upid"] != "no such task" {
		t.Fatalf("unknown upid: %d %s", res.Status, res.Text)
	}
	cs := getData(t, sim, "/cluster/status").([]any)
	if cs[0].(map[string]any)["online"] != float64(1) {
		t.Fatalf("cluster/status booleans as numbers: %v", cs)
	}
}

// POST config runs update_vm_api's early checks before forking, as a 500 with no task:
// the digest, the lock property (skiplock passes it), and balloon against memory.
func TestConfigPostEarlyChecks(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 410, Config: map[string]string{"memory": "2048", "scsi0": "local-lvm:4"}}); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	vm := vmOf(t, c, "pve", 410)
	cases := map[string]struct {
		lock string
		opts []proxmox.VirtualMachineOption
		want string
	}{
		"digest":  {opts: []proxmox.VirtualMachineOption{{Name: "digest", Value: "0123456789abcdef"}, {Name: "cores", Value: 2}}, want: "detected modified configuration - file changed by other user? Try again."},
		"lock":    {lock: "clone", opts: []proxmox.VirtualMachineOption{{Name: "cores", Value: 2}}, want: "VM is locked (clone)"},
		"balloon": {opts: []proxmox.VirtualMachineOption{{Name: "balloon", Value: 4096}}, want: "balloon value too large (must be smaller than assigned memory)"},
		"balloon against new memory": {opts: []proxmox.VirtualMachineOption{{Name: "memory", Value: 1024}, {Name: "balloon", Value: 2048}},
			want: "balloon value too large (must be smaller than assigned memory)"},
	}
	for name, tc := range cases {
		if err := sim.SetGuestConfig(410, "lock", tc.lock); err != nil {
			t.Fatal(err)
		}
		before := len(taskList(t, c))
		_, err := vm.Config(ctx, tc.opts...)
		if ae := apiErr(t, err); ae.Status != "500 "+tc.want || ae.Message != tc.want {
			t.Errorf("%s: %v, want a 500 %q", name, err, tc.want)
		}
		if after := len(taskList(t, c)); after != before {
			t.Errorf("%s: a refused update started a task", name)
		}
	}
	if err := sim.SetGuestConfig(410, "lock", "backup"); err != nil {
		t.Fatal(err)
	}
	task, err := vm.Config(ctx, proxmox.VirtualMachineOption{Name: "cores", Value: 3}, proxmox.VirtualMachineOption{Name: "skiplock", Value: 1})
	if err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("skiplock: %v", err)
	}
}

// taskList is every task the node lists.
func taskList(t *testing.T, c *proxmox.Client) proxmox.Tasks {
	t.Helper()
	tasks, err := nodeOf(t, c, "pve").Tasks(testCtx(t), &proxmox.NodeTasksOptions{Source: "all", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}
