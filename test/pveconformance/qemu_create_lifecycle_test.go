package pveconformance

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// create_vm reserves the VMID with a config holding only the lock "create"
// before it forks (qemu-server src/PVE/API2/Qemu.pm create_vm,
// pve-guest-common src/PVE/AbstractConfig.pm create_and_lock_config); the
// VMID is then taken for /cluster/nextid (pve-manager PVE/API2/Cluster.pm
// nextid: "VM <vmid> already exists"). The config reads back with PVE's
// types (vm_config: numbers for integer and boolean properties), a disk as
// <storage>:vm-<vmid>-disk-<n>, a MAC for the NIC (add_random_macs); a
// second create of the VMID is 500 "unable to create VM N - VM N already
// exists on node '<node>'" (create_and_lock_config: check_vmid_unused).
func TestQemuCreateReservesVMIDAndLocks(t *testing.T) {
	tg := target(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmcreate": 400 * time.Millisecond}})
	tg.requireSim("reads the config while the create task runs: a create slow enough for that (Options.TaskDurations)")
	covers(tg, "POST /nodes/{node}/qemu vmid name memory cores scsi[n] ide[n] net[n] agent onboot", "GET /cluster/nextid vmid")
	id := tg.vmid()
	res := tg.raw(http.MethodPost, "/nodes/"+url.PathEscape(tg.Node())+"/qemu", Params("vmid", itoa(id), "name", tg.GuestName("reserve"), "pool", tg.Pool(),
		"memory", "2048", "cores", "2", "scsi0", tg.Storage()+":1,ssd=1", "ide2", tg.Storage()+":cloudinit", "net0", "virtio,bridge=vmbr0",
		"agent", "1", "onboot", "1"))
	if res.Status != http.StatusOK {
		t.Fatalf("create: %s %s", res.StatusLine, res.Text)
	}
	t.Cleanup(func() { tg.destroy("qemu", id) })
	if during := tg.config("qemu", id, nil); during["lock"] != "create" || len(during) != 2 {
		t.Errorf("config during the create: %v, want the lock and the digest", during)
	}
	if next := tg.raw(http.MethodGet, "/cluster/nextid", Params("vmid", itoa(id))); next.Status != http.StatusBadRequest || next.Errors()["vmid"] != "VM "+itoa(id)+" already exists" {
		t.Errorf("nextid of the reserved VMID: %s %s", next.StatusLine, next.Text)
	}
	if exit := tg.task(res.UPID()); exit != "OK" {
		t.Fatalf("create task: %s", exit)
	}
	cfg := tg.config("qemu", id, nil)
	if cfg["memory"] != "2048" || cfg["agent"] != "1" || cfg["cores"] != float64(2) || cfg["onboot"] != float64(1) {
		t.Errorf("wire types: memory=%#v agent=%#v cores=%#v onboot=%#v", cfg["memory"], cfg["agent"], cfg["cores"], cfg["onboot"])
	}
	if s, _ := cfg["scsi0"].(string); !strings.HasPrefix(s, tg.Storage()+":vm-"+itoa(id)+"-disk-0,") || !strings.Contains(s, "ssd=1") {
		t.Errorf("scsi0 %v", cfg["scsi0"])
	}
	if n, _ := cfg["net0"].(string); !strings.HasPrefix(n, "virtio=") {
		t.Errorf("net0 gets a MAC: %v", cfg["net0"])
	}
	if _, locked := cfg["lock"]; locked || cfg["digest"] == "" {
		t.Errorf("lock or digest after the create: %v", cfg)
	}
	var st map[string]any
	tg.data(tg.guestPath("qemu", id, "/status/current"), nil, &st)
	if st["template"] != nil || st["agent"] != float64(1) {
		t.Errorf("status/current: template %v agent %v", st["template"], st["agent"])
	}
	vm, err := tg.goNode().VirtualMachine(tg.ctx(), id)
	if err != nil || vm.Template || vm.Name != tg.GuestName("reserve") || vm.VirtualMachineConfig.Agent != "1" {
		t.Errorf("go-proxmox view: %v template=%v name=%q", err, vm != nil && vm.Template, tg.GuestName("reserve"))
	}
	again := tg.raw(http.MethodPost, "/nodes/"+url.PathEscape(tg.Node())+"/qemu", Params("vmid", itoa(id)))
	want := "unable to create VM " + itoa(id) + " - VM " + itoa(id) + " already exists on node '" + tg.Node() + "'"
	if again.Status != http.StatusInternalServerError || !strings.Contains(again.Message(), want) {
		t.Errorf("duplicate create: %s %q, want 500 %q", again.StatusLine, again.Message(), want)
	}
}

// A create whose worker fails (create_disks finds no ISO for the CD-ROM)
// ends as create_vm's worker dies, "unable to create VM N - <error>", and
// removes the config it reserved (qemu-server src/PVE/API2/Qemu.pm
// create_vm: destroy_config on error); reading it then is 500
// "Configuration file 'nodes/<node>/qemu-server/N.conf' does not exist"
// (pve-guest-common src/PVE/AbstractConfig.pm load_config).
func TestQemuFailedCreateRemovesConfig(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu vmid scsi[n] ide[n]")
	id := tg.vmid()
	iso := tg.ContentStorage() + ":iso/" + Prefix + tg.RunID() + "-missing.iso"
	res := tg.raw(http.MethodPost, "/nodes/"+url.PathEscape(tg.Node())+"/qemu", Params("vmid", itoa(id), "name", tg.GuestName("failed"), "pool", tg.Pool(),
		"scsi0", tg.Storage()+":1", "ide2", iso+",media=cdrom"))
	if res.Status != http.StatusOK {
		t.Fatalf("create: %s %s", res.StatusLine, res.Text)
	}
	t.Cleanup(func() { tg.destroy("qemu", id) })
	if exit, want := tg.task(res.UPID()), "unable to create VM "+itoa(id)+" - volume "+iso+" does not exist"; exit != want {
		t.Errorf("create task ended %q, want %q", exit, want)
	}
	after := tg.raw(http.MethodGet, tg.guestPath("qemu", id, "/config"), nil)
	want := "Configuration file 'nodes/" + tg.Node() + "/qemu-server/" + itoa(id) + ".conf' does not exist"
	if after.Status != http.StatusInternalServerError || strings.TrimSpace(after.Message()) != want {
		t.Errorf("a failed create must remove its config: %s %q", after.StatusLine, after.Message())
	}
}

// create_vm checks each new disk's storage before it forks (qemu-server
// src/PVE/API2/Qemu.pm $check_storage_access): a storage that does not
// exist is 500 "storage '<id>' does not exist" (pve-storage
// src/PVE/Storage.pm storage_config); one without content images is a
// parameter error, 400 with errors.storage "storage '<id>' does not support
// vm images". No task, no config either way.
func TestQemuCreateChecksDiskStoragesBeforeForking(t *testing.T) {
	tg := target(t, pvesim.Options{})
	id := tg.vmid()
	create := func(disk string) Response {
		return tg.raw(http.MethodPost, "/nodes/"+url.PathEscape(tg.Node())+"/qemu", Params("vmid", itoa(id), "name", tg.GuestName("storages"), "pool", tg.Pool(), "scsi0", disk))
	}
	t.Cleanup(func() { tg.destroy("qemu", id) })
	t.Run("MissingStorage", func(t *testing.T) {
		tg := tg.in(t)
		if tg.IsReal() && tg.User() != "root@pam" {
			t.Skip("PVE first checks Datastore.AllocateSpace on /storage/<id>, which the suite's role holds on named storages only: a 403 before the check this case is about")
		}
		missing := Prefix + "nowhere"
		if res := create(missing + ":1"); res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != "storage '"+missing+"' does not exist" {
			t.Errorf("scsi0 on a missing storage: %s %q", res.StatusLine, res.Message())
		}
		if tg.guestExists("qemu", id) {
			t.Error("a refused create must leave no config")
		}
	})
	t.Run("StorageWithoutImages", func(t *testing.T) {
		tg := tg.in(t)
		res := create(tg.ContentStorage() + ":1")
		if res.Status != http.StatusBadRequest || res.Errors()["storage"] != "storage '"+tg.ContentStorage()+"' does not support vm images" {
			t.Errorf("scsi0 on %s (no images content): %s %s", tg.ContentStorage(), res.StatusLine, res.Text)
		}
		if tg.guestExists("qemu", id) {
			t.Error("a refused create must leave no config")
		}
	})
}

// POST config runs update_vm_api's early checks before it forks, as a 500
// with no task (qemu-server src/PVE/API2/Qemu.pm $update_vm_api): the
// digest (PVE::Tools assert_if_modified, "detected modified configuration
// - file changed by other user? Try again."), the lock property
// (pve-guest-common AbstractConfig.pm check_lock, "VM is locked (<lock>)";
// skiplock passes it), and balloon against the memory, the new one when
// both are sent ("balloon value too large (must be smaller than assigned
// memory)").
func TestQemuConfigPostEarlyChecks(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/config cores balloon memory digest", "GET /nodes/{node}/tasks")
	id := tg.createVM("early") // memory 512
	cases := map[string]struct {
		reason string
		lock   string
		params []string
		want   string
	}{
		"Digest":           {reason: "A stale digest is refused.", params: []string{"digest", "0123456789abcdef0123456789abcdef01234567", "cores", "2"}, want: "detected modified configuration - file changed by other user? Try again."},
		"Lock":             {reason: "A locked config is refused.", lock: "clone", params: []string{"cores", "2"}, want: "VM is locked (clone)"},
		"Balloon":          {reason: "A balloon above the memory is refused.", params: []string{"balloon", "1024"}, want: "balloon value too large (must be smaller than assigned memory)"},
		"BalloonNewMemory": {reason: "The balloon is checked against the memory sent with it.", params: []string{"memory", "256", "balloon", "384"}, want: "balloon value too large (must be smaller than assigned memory)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := tg.in(t)
			if tc.lock != "" {
				sim := tg.requireSim("sets the lock property directly (SetGuestConfig)")
				if err := sim.SetGuestConfig(id, "lock", tc.lock); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = sim.SetGuestConfig(id, "lock", "") })
			}
			before := len(tg.tasksOf(id))
			res := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/config"), Params(tc.params...))
			if res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != tc.want {
				t.Errorf("%s: %s %q, want 500 %q", tc.reason, res.StatusLine, res.Message(), tc.want)
			}
			if after := len(tg.tasksOf(id)); after != before {
				t.Errorf("%s: a refused update started a task", tc.reason)
			}
		})
	}
	t.Run("Skiplock", func(t *testing.T) {
		tg := tg.in(t)
		sim := tg.requireSim("sets a backup lock directly (SetGuestConfig)")
		if err := sim.SetGuestConfig(id, "lock", "backup"); err != nil {
			t.Fatal(err)
		}
		tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/config"), Params("cores", "3", "skiplock", "1"))
	})
}

// tasksOf lists the node's tasks of vmid.
func (c *tcase) tasksOf(vmid int) []map[string]any {
	c.t.Helper()
	var tasks []map[string]any
	c.data("/nodes/"+url.PathEscape(c.Node())+"/tasks", Params("source", "all", "limit", "1000", "vmid", itoa(vmid)), &tasks)
	return tasks
}

// What go-proxmox trips on when it decodes PVE's answers: nextid is a
// string (pve-manager PVE/API2/Cluster.pm nextid, returns type string) and
// a taken one a parameter error ("VM <vmid> already exists"); /qemu omits
// template for a VM (qemu-server src/PVE/API2/Qemu.pm vmlist, from
// src/PVE/QemuServer.pm vmstatus: set only for a template); a UPID has
// nine fields, the user with the token (pve-common
// src/PVE/RESTEnvironment.pm fork_worker, PVE::Tools upid_encode); the
// task status carries numbers and user and tokenid apart (pve-manager
// PVE/API2/Tasks.pm read_task_status); a task list has endtime; a log ends
// "TASK OK"; POST config with background_delay answers null once done
// (qemu-server update_vm_async); a malformed UPID is 400 errors.upid
// "unable to parse worker upid", an unknown one "no such task"
// (read_task_status); /cluster/status gives booleans as numbers
// (pve-manager PVE/API2/Cluster.pm get_status).
func TestGoProxmoxTraps(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "GET /cluster/nextid", "GET /nodes/{node}/qemu", "GET /nodes/{node}/tasks/{upid}/status", "GET /nodes/{node}/tasks/{upid}/log",
		"GET /cluster/status")
	id := tg.createVM("traps")
	if res := tg.raw(http.MethodGet, "/cluster/nextid", nil); !strings.HasPrefix(string(res.Body["data"]), `"`) {
		t.Errorf("nextid must be a string: %s", res.Body["data"])
	}
	if res := tg.raw(http.MethodGet, "/cluster/nextid", Params("vmid", itoa(id))); res.Status != http.StatusBadRequest || res.Errors()["vmid"] != "VM "+itoa(id)+" already exists" {
		t.Errorf("nextid check: %s %s", res.StatusLine, res.Text)
	}
	var list []map[string]any
	tg.data("/nodes/"+url.PathEscape(tg.Node())+"/qemu", nil, &list)
	for _, g := range list {
		if g["vmid"] == float64(id) && g["template"] != nil {
			t.Errorf("template must be absent for a VM in /qemu: %v", g)
		}
	}
	c := tg.goClient()
	vm := c.NodeRef(tg.Node()).VirtualMachineRef(id)
	task, err := vm.Start(tg.ctx())
	if err != nil {
		t.Fatal(err)
	}
	who := tg.User()
	if tok := tg.Config().TokenID; tok != "" {
		who = tok
	}
	if parts := strings.Split(string(task.UPID), ":"); len(parts) != 9 || parts[8] != "" || parts[7] != who {
		t.Errorf("UPID %q, want nine fields, the user %s", task.UPID, who)
	}
	_ = tg.goWait(task)
	var st map[string]any
	tg.data("/nodes/"+url.PathEscape(tg.Node())+"/tasks/"+url.PathEscape(string(task.UPID))+"/status", nil, &st)
	if _, isNum := st["starttime"].(float64); !isNum || st["pid"] == nil || st["user"] != tg.User() || st["exitstatus"] != "OK" {
		t.Errorf("task status: %v", st)
	}
	if tok := tg.Config().TokenID; tok != "" {
		if _, name, _ := strings.Cut(tok, "!"); st["tokenid"] != name {
			t.Errorf("task status tokenid %v, want %s", st["tokenid"], name)
		}
	}
	tasks, err := c.NodeRef(tg.Node()).Tasks(tg.ctx(), &proxmox.NodeTasksOptions{VMID: id})
	if err != nil || len(tasks) == 0 || tasks[0].EndTime.IsZero() {
		t.Errorf("task list with endtime: %v %+v", err, tasks)
	}
	if logs, err := task.Log(tg.ctx(), 0, 50); err != nil || len(logs) == 0 || logs[len(logs)-1] != "TASK OK" {
		t.Errorf("log: %v %v", err, logs)
	}
	nilTask, err := vm.Config(tg.ctx(), proxmox.VirtualMachineOption{Name: "background_delay", Value: 5}, proxmox.VirtualMachineOption{Name: "description", Value: "quick"})
	if err != nil || nilTask != nil {
		t.Errorf("background_delay gives data null, so a nil task: %v %v", nilTask, err)
	}
	tasksPath := "/nodes/" + url.PathEscape(tg.Node()) + "/tasks/"
	if res := tg.raw(http.MethodGet, tasksPath+"UPID:"+tg.Node()+":0:0:0:x:y:z:/status", nil); res.Status != http.StatusBadRequest || res.Errors()["upid"] != "unable to parse worker upid" {
		t.Errorf("malformed upid: %s %s", res.StatusLine, res.Text)
	}
	unknown := "UPID:" + tg.Node() + ":00001234:00005678:6700AABB:qmstart:" + itoa(id) + ":" + tg.User() + ":"
	if res := tg.raw(http.MethodGet, tasksPath+unknown+"/status", nil); res.Status != http.StatusBadRequest || res.Errors()["upid"] != "no such task" {
		t.Errorf("unknown upid: %s %s", res.StatusLine, res.Text)
	}
	var cs []map[string]any
	tg.data("/cluster/status", nil, &cs)
	for _, e := range cs {
		if e["type"] == "node" && e["name"] == tg.Node() && e["online"] != float64(1) {
			t.Errorf("cluster/status booleans as numbers: %v", e)
		}
	}
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/stop"), nil)
}
