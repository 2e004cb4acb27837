package pveconformance

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// eventually polls cond for up to 10 seconds.
func (c *tcase) eventually(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// migrationCase is one migrate request and how it must end: refused
// (wantStatus, wantMsg) or a task (wantExit, log lines with {id} for the
// VMID), the guest then on wantNode in wantPower.
type migrationCase struct {
	reason     string
	vmid       int
	params     []string
	wantStatus int
	wantMsg    string
	wantExit   string
	wantLog    []string
	wantNode   string
	wantPower  string
	wantRootFS string
}

func (c *tcase) checkMigration(sim *pvesim.Server, kind string, tc migrationCase) {
	c.t.Helper()
	id := strconv.Itoa(tc.vmid)
	res := c.raw(http.MethodPost, c.guestPath(kind, tc.vmid, "/migrate"), Params(tc.params...))
	if tc.wantStatus != 0 {
		if res.Status != tc.wantStatus || strings.TrimSpace(res.Message()) != tc.wantMsg {
			c.t.Fatalf("%s\nanswer %s %q, want %d %q", tc.reason, res.StatusLine, res.Message(), tc.wantStatus, tc.wantMsg)
		}
		if tc.wantStatus == http.StatusBadRequest && res.Errors()["target"] != "target is local node." {
			c.t.Errorf("parameter errors %v, want target: target is local node.", res.Errors())
		}
	} else {
		if res.Status != http.StatusOK {
			c.t.Fatalf("%s\nmigrate: %s %s", tc.reason, res.StatusLine, res.Text)
		}
		if exit := c.task(res.UPID()); exit != tc.wantExit {
			c.t.Errorf("%s\nexit status %q, want %q", tc.reason, exit, tc.wantExit)
		}
		log := c.taskLog(res.UPID())
		for _, want := range tc.wantLog {
			if want = strings.ReplaceAll(want, "{id}", id); !logHas(log, want) {
				c.t.Errorf("%s\ntask log %q lacks %q", tc.reason, log, want)
			}
		}
	}
	c.eventually("the guest on "+tc.wantNode, func() bool {
		g, _ := sim.Guest(tc.vmid)
		return g.Node == tc.wantNode && g.Config["lock"] == ""
	})
	g, _ := sim.Guest(tc.vmid)
	if tc.wantPower != "" && g.Status != tc.wantPower {
		c.t.Errorf("%s\npower %s, want %s", tc.reason, g.Status, tc.wantPower)
	}
	if want := strings.ReplaceAll(tc.wantRootFS, "{id}", id); want != "" {
		if !strings.HasPrefix(g.Config["rootfs"], want) {
			c.t.Errorf("%s\nrootfs %q, want %q…", tc.reason, g.Config["rootfs"], want)
		}
		if !sim.HasVolume(tc.wantNode, strings.SplitN(g.Config["rootfs"], ",", 2)[0]) {
			c.t.Errorf("%s\nthe volume of rootfs %q is not on %s", tc.reason, g.Config["rootfs"], tc.wantNode)
		}
	}
}

// Migration as qemu-server does it (src/PVE/API2/Qemu.pm migrate_vm,
// src/PVE/QemuMigrate.pm): early checks answer the request, the worker's scan fails
// the task (the reason in the log, "migration aborted" as its exit status), and a successful
// migration moves the guest and its local volumes to the target, keeping its power state;
// an HA resource is handed to the HA manager (migrate_vm: vm_is_ha_managed, a hamigrate
// worker prints "Requesting HA migration for VM $vmid to node $target" and queues the
// CRM command).
func TestMigrateFollowsQemuServer(t *testing.T) {
	tg := target(t, pvesim.Options{Nodes: []string{simNode, "other"}, SharedStorage: "shared",
		TaskDurations: map[string]time.Duration{"qmigrate": 200 * time.Millisecond}})
	sim := tg.requireSim("needs a shared storage, an HA resource and a passed-through device on a cluster the suite may move guests across")
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/migrate target online with-local-disks")
	seed := func(running, ha bool, cfg map[string]string) int {
		cfg["name"] = "g"
		return tg.seedGuest(sim, pvesim.GuestSeed{Running: running, HAManaged: ha, Config: cfg})
	}
	iso := tg.ContentStorage() + ":iso/" + Prefix + "debian.iso"
	if err := sim.AddVolume(tg.Node(), iso); err != nil {
		t.Fatal(err)
	}
	shared := func() int { return seed(true, false, map[string]string{"scsi0": "shared:4"}) }
	local := func(running bool) int { return seed(running, false, map[string]string{"scsi0": tg.Storage() + ":4"}) }
	running := shared()
	node := tg.Node()
	cases := map[string]migrationCase{
		"LiveOnSharedStorage": {reason: "A running VM on shared storage moves online and keeps running.",
			vmid: shared(), params: []string{"target", "other", "online", "1"}, wantExit: "OK", wantLog: []string{"migration finished successfully"}, wantNode: "other", wantPower: "running"},
		"RunningWithoutOnline": {reason: "migrate_vm refuses a running VM without online before forking.",
			vmid: running, params: []string{"target", "other"}, wantStatus: http.StatusInternalServerError, wantMsg: "can't migrate running VM without --online", wantNode: node},
		"TargetIsLocal": {reason: "The target may not be the source node (a parameter error).",
			vmid: running, params: []string{"target", node, "online", "1"}, wantStatus: http.StatusBadRequest, wantMsg: "Parameter verification failed.", wantNode: node},
		"NoSuchNode": {reason: "An unknown target is refused before forking.",
			vmid: running, params: []string{"target", "nowhere", "online", "1"}, wantStatus: http.StatusInternalServerError, wantMsg: "no such cluster node 'nowhere'", wantNode: node},
		"LiveWithLocalDisk": {reason: "A live migration of local disks needs with-local-disks: the scan fails the task, the cause in the log.",
			vmid: local(true), params: []string{"target", "other", "online", "1"}, wantExit: "migration aborted",
			wantLog: []string{"can't live migrate attached local disks without with-local-disks option"}, wantNode: node, wantPower: "running"},
		"LiveWithLocalDisksAllowed": {reason: "with-local-disks moves the local disk along.",
			vmid: local(true), params: []string{"target", "other", "online", "1", "with-local-disks", "1"}, wantExit: "OK", wantNode: "other", wantPower: "running"},
		"OfflineWithLocalDisk": {reason: "A stopped VM's local disks move with an offline migration.",
			vmid: local(false), params: []string{"target", "other"}, wantExit: "OK", wantNode: "other", wantPower: "stopped"},
		"LocalDevice": {reason: "A passed-through PCI device ties a VM to its node: the worker's prepare fails the task with AbstractMigrate's \"migration aborted\", the reason in the log.",
			vmid: seed(true, false, map[string]string{"scsi0": "shared:4", "hostpci0": "0000:01:00.0"}), params: []string{"target", "other", "online", "1"}, wantExit: "migration aborted",
			wantLog: []string{"ERROR: migration aborted (duration 00:00:00): can't migrate VM which uses local devices: hostpci0"}, wantNode: node, wantPower: "running"},
		"LocalCDROM": {reason: "An ISO on local storage in a CD-ROM drive blocks the migration.",
			vmid: seed(false, false, map[string]string{"scsi0": "shared:4", "ide2": iso + ",media=cdrom"}), params: []string{"target", "other"}, wantExit: "migration aborted",
			wantLog: []string{"can't migrate local disk '" + iso + "': local cdrom image"}, wantNode: node, wantPower: "stopped"},
		"HAManaged": {reason: "An HA resource is handed to the HA manager (hamigrate), which then migrates it.",
			vmid: seed(true, true, map[string]string{"scsi0": "shared:4"}), params: []string{"target", "other", "online", "1"}, wantExit: "OK",
			wantLog: []string{"Requesting HA migration for VM {id} to node other"}, wantNode: "other", wantPower: "running"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { tg.in(t).checkMigration(sim, "qemu", tc) })
	}
}

// Container migration as pve-container does it (src/PVE/API2/LXC.pm migrate_vm,
// src/PVE/LXC/Migrate.pm): migrate_vm refuses a running container asked
// to move without online or restart, and a target storage the target lacks, before forking;
// the vzmigrate worker's prepare refuses a live migration ("lxc live migration is currently
// not implemented") and local bind mounts, failing the task with "migration aborted" and the
// reason in the log; a restart migration shuts the container down, moves it with its local
// volumes (onto the mapped storage with target-storage) and starts it on the target.
func TestMigrateFollowsPVEContainer(t *testing.T) {
	tg := target(t, pvesim.Options{Nodes: []string{simNode, "other"}, SharedStorage: "shared",
		TaskDurations: map[string]time.Duration{"vzmigrate": 200 * time.Millisecond, "hamigrate": 100 * time.Millisecond}})
	sim := tg.requireSim("needs a shared storage, an HA resource and a bind mount on a cluster the suite may move guests across")
	covers(tg, "POST /nodes/{node}/lxc/{vmid}/migrate target restart timeout target-storage")
	seed := func(running, ha bool, cfg map[string]string) int {
		cfg["hostname"] = "ct"
		return tg.seedGuest(sim, pvesim.GuestSeed{Kind: pvesim.KindLXC, Running: running, HAManaged: ha, Config: cfg})
	}
	local := func(running bool) int { return seed(running, false, map[string]string{"rootfs": tg.Storage() + ":4"}) }
	refused, node, st := local(true), tg.Node(), tg.Storage()
	cases := map[string]migrationCase{
		"RunningWithoutMode": {reason: "migrate_vm refuses a running container without online or restart before forking.",
			vmid: refused, params: []string{"target", "other"}, wantStatus: http.StatusInternalServerError,
			wantMsg: "can't migrate running container without --online or --restart", wantNode: node, wantPower: "running"},
		"TargetIsLocal": {reason: "The target may not be the source node (a parameter error).",
			vmid: refused, params: []string{"target", node, "restart", "1"}, wantStatus: http.StatusBadRequest, wantMsg: "Parameter verification failed.", wantNode: node},
		"NoSuchNode": {reason: "An unknown target is refused before forking.",
			vmid: refused, params: []string{"target", "nowhere", "restart", "1"}, wantStatus: http.StatusInternalServerError, wantMsg: "no such cluster node 'nowhere'", wantNode: node},
		"TargetStorageMissing": {reason: "A target storage the target node lacks is refused before forking.",
			vmid: refused, params: []string{"target", "other", "restart", "1", "target-storage", "nowhere"}, wantStatus: http.StatusInternalServerError,
			wantMsg: "storage 'nowhere' is not available on node 'other'", wantNode: node},
		"TargetStorageWithoutRootdir": {reason: "A target storage must hold container volumes.",
			vmid: refused, params: []string{"target", "other", "restart", "1", "target-storage", tg.ContentStorage()}, wantStatus: http.StatusInternalServerError,
			wantMsg: "storage '" + tg.ContentStorage() + "' does not support CT rootdirs", wantNode: node},
		"Live": {reason: "PVE has no live migration for containers: the worker's prepare fails the task, the container keeps running.",
			vmid: local(true), params: []string{"target", "other", "online", "1"}, wantExit: "migration aborted",
			wantLog: []string{"lxc live migration is currently not implemented"}, wantNode: node, wantPower: "running"},
		"Restart": {reason: "A restart migration shuts the container down, moves its local volume and starts it on the target.",
			vmid: local(true), params: []string{"target", "other", "restart", "1", "timeout", "30"}, wantExit: "OK",
			wantLog:  []string{"shutdown CT {id}", "found local volume '" + st + ":vm-{id}-disk-0'", "start container on target node", "migration finished successfully"},
			wantNode: "other", wantPower: "running", wantRootFS: st + ":vm-{id}-disk-0"},
		"Offline": {reason: "A stopped container moves offline and stays stopped.",
			vmid: local(false), params: []string{"target", "other"}, wantExit: "OK", wantNode: "other", wantPower: "stopped"},
		"BindMount": {reason: "A local bind mount point ties a container to its node.",
			vmid: seed(true, false, map[string]string{"rootfs": "shared:4", "mp0": "/srv/data,mp=/data"}), params: []string{"target", "other", "restart", "1"}, wantExit: "migration aborted",
			wantLog: []string{"cannot migrate local bind mount point 'mp0'"}, wantNode: node, wantPower: "running"},
		"HAManaged": {reason: "An HA resource is handed to the HA manager (hamigrate), which runs a restart migration.",
			vmid: seed(true, true, map[string]string{"rootfs": "shared:4"}), params: []string{"target", "other", "restart", "1"}, wantExit: "OK",
			wantLog: []string{"Requesting HA migration for CT {id} to node other"}, wantNode: "other", wantPower: "running"},
		"TargetStorageMap": {reason: "target-storage maps the local volume onto another storage of the target.",
			vmid: local(true), params: []string{"target", "other", "restart", "1", "target-storage", "shared"}, wantExit: "OK",
			wantLog: []string{"volume '" + st + ":vm-{id}-disk-0' is 'shared:"}, wantNode: "other", wantPower: "running", wantRootFS: "shared:"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { tg.in(t).checkMigration(sim, "lxc", tc) })
	}
}
