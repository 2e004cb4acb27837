package pvesim_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Migration as qemu-server does it: early checks answer the request, the worker's scan fails
// the task (the reason in the log, "migration aborted" as its exit status), and a successful
// migration moves the guest and its local volumes to the target, keeping its power state.
func TestMigrateFollowsQemuServer(t *testing.T) {
	sim := startSim(t, pvesim.Options{Nodes: []string{"pve", "other"}, SharedStorage: "shared",
		TaskDurations: map[string]time.Duration{"qmigrate": 200 * time.Millisecond}})
	seed := func(vmid int, running, ha bool, cfg map[string]string) {
		t.Helper()
		cfg["name"] = "g"
		if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: vmid, Running: running, HAManaged: ha, Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	seed(600, true, false, map[string]string{"scsi0": "shared:4"})
	seed(601, true, false, map[string]string{"scsi0": "shared:4"})
	seed(602, true, false, map[string]string{"scsi0": "local-lvm:4"})
	seed(603, true, false, map[string]string{"scsi0": "local-lvm:4"})
	seed(604, false, false, map[string]string{"scsi0": "local-lvm:4"})
	seed(605, true, false, map[string]string{"scsi0": "shared:4", "hostpci0": "0000:01:00.0"})
	seed(606, true, true, map[string]string{"scsi0": "shared:4"})
	if err := sim.AddVolume("pve", "local:iso/debian.iso"); err != nil {
		t.Fatal(err)
	}
	seed(607, false, false, map[string]string{"scsi0": "shared:4", "ide2": "local:iso/debian.iso,media=cdrom"})

	cases := map[string]struct {
		reason     string
		vmid       string
		params     string
		wantStatus int
		wantMsg    string
		wantExit   string
		wantLog    string
		wantNode   string
		wantPower  string
	}{
		"LiveOnSharedStorage": {reason: "A running VM on shared storage moves online and keeps running.",
			vmid: "600", params: "target=other&online=1", wantExit: "OK", wantLog: "migration finished successfully", wantNode: "other", wantPower: "running"},
		"RunningWithoutOnline": {reason: "migrate_vm refuses a running VM without online before forking.",
			vmid: "601", params: "target=other", wantStatus: http.StatusInternalServerError, wantMsg: "can't migrate running VM without --online", wantNode: "pve"},
		"TargetIsLocal": {reason: "The target may not be the source node (a parameter error).",
			vmid: "601", params: "target=pve&online=1", wantStatus: http.StatusBadRequest, wantMsg: "Parameter verification failed.", wantNode: "pve"},
		"NoSuchNode": {reason: "An unknown target is refused before forking.",
			vmid: "601", params: "target=nowhere&online=1", wantStatus: http.StatusInternalServerError, wantMsg: "no such cluster node 'nowhere'", wantNode: "pve"},
		"LiveWithLocalDisk": {reason: "A live migration of local disks needs with-local-disks: the scan fails the task, the cause in the log.",
			vmid: "602", params: "target=other&online=1", wantExit: "migration aborted",
			wantLog: "can't live migrate attached local disks without with-local-disks option", wantNode: "pve", wantPower: "running"},
		"LiveWithLocalDisksAllowed": {reason: "with-local-disks moves the local disk along.",
			vmid: "603", params: "target=other&online=1&with-local-disks=1", wantExit: "OK", wantNode: "other", wantPower: "running"},
		"OfflineWithLocalDisk": {reason: "A stopped VM's local disks move with an offline migration.",
			vmid: "604", params: "target=other", wantExit: "OK", wantNode: "other", wantPower: "stopped"},
		"LocalDevice": {reason: "A passed-through PCI device ties a VM to its node: the worker's prepare fails the task with AbstractMigrate's \"migration aborted\", the reason in the log.",
			vmid: "605", params: "target=other&online=1", wantExit: "migration aborted",
			wantLog: "ERROR: migration aborted (duration 00:00:00): can't migrate VM which uses local devices: hostpci0", wantNode: "pve", wantPower: "running"},
		"LocalCDROM": {reason: "An ISO on local storage in a CD-ROM drive blocks the migration.",
			vmid: "607", params: "target=other", wantExit: "migration aborted", wantLog: "can't migrate local disk 'local:iso/debian.iso': local cdrom image", wantNode: "pve", wantPower: "stopped"},
		"HAManaged": {reason: "An HA resource is handed to the HA manager (hamigrate), which then migrates it.",
			vmid: "606", params: "target=other&online=1", wantExit: "OK", wantLog: "Requesting HA migration for VM 606 to node other", wantNode: "other", wantPower: "running"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := rawCall(t, sim, http.MethodPost, "/nodes/pve/qemu/"+tc.vmid+"/migrate",
				"application/x-www-form-urlencoded", tc.params, tokenHeader())
			if tc.wantStatus != 0 {
				if res.Status != tc.wantStatus || strings.TrimSpace(res.message()) != tc.wantMsg {
					t.Fatalf("%s\nanswer %d %q, want %d %q", tc.reason, res.Status, res.message(), tc.wantStatus, tc.wantMsg)
				}
				if tc.wantStatus == http.StatusBadRequest && res.errors()["target"] != "target is local node." {
					t.Errorf("parameter errors %v, want target: target is local node.", res.errors())
				}
			} else {
				var upid string
				if res.Status != http.StatusOK || jsonUnmarshal(res.Body["data"], &upid) != nil {
					t.Fatalf("%s\nmigrate: %d %s", tc.reason, res.Status, res.Text)
				}
				var status map[string]any
				eventually(t, "the migration task ends", func() bool {
					status = getMap(t, sim, "/nodes/pve/tasks/"+url.PathEscape(upid)+"/status")
					return status["status"] == "stopped"
				})
				if status["exitstatus"] != tc.wantExit {
					t.Errorf("%s\nexit status %q, want %q", tc.reason, status["exitstatus"], tc.wantExit)
				}
				if log := taskLogText(t, sim, upid); tc.wantLog != "" && !strings.Contains(log, tc.wantLog) {
					t.Errorf("%s\ntask log %q lacks %q", tc.reason, log, tc.wantLog)
				}
			}
			id := map[string]int{"600": 600, "601": 601, "602": 602, "603": 603, "604": 604, "605": 605, "606": 606, "607": 607}[tc.vmid]
			eventually(t, "the guest on "+tc.wantNode, func() bool {
				g, _ := sim.Guest(id)
				return g.Node == tc.wantNode && g.Config["lock"] == ""
			})
			if g, _ := sim.Guest(id); tc.wantPower != "" && g.Status != tc.wantPower {
				t.Errorf("%s\npower %s, want %s", tc.reason, g.Status, tc.wantPower)
			}
		})
	}
}

// Container migration as pve-container does it: migrate_vm refuses a running container asked
// to move without online or restart, and a target storage the target lacks, before forking;
// the vzmigrate worker's prepare refuses a live migration ("lxc live migration is currently
// not implemented") and local bind mounts, failing the task with "migration aborted" and the
// reason in the log; a restart migration shuts the container down, moves it with its local
// volumes (onto the mapped storage with target-storage) and starts it on the target.
func TestMigrateFollowsPVEContainer(t *testing.T) {
	sim := startSim(t, pvesim.Options{Nodes: []string{"pve", "other"}, SharedStorage: "shared",
		TaskDurations: map[string]time.Duration{"vzmigrate": 200 * time.Millisecond, "hamigrate": 100 * time.Millisecond}})
	seed := func(vmid int, running, ha bool, cfg map[string]string) {
		t.Helper()
		cfg["hostname"] = "ct"
		if err := sim.AddGuest(pvesim.GuestSeed{Kind: pvesim.KindLXC, Node: "pve", VMID: vmid, Running: running, HAManaged: ha, Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	for vmid := 700; vmid <= 703; vmid++ {
		seed(vmid, true, false, map[string]string{"rootfs": "local-lvm:4"})
	}
	seed(704, false, false, map[string]string{"rootfs": "local-lvm:4"})
	seed(705, true, false, map[string]string{"rootfs": "shared:4", "mp0": "/srv/data,mp=/data"})
	seed(706, true, true, map[string]string{"rootfs": "shared:4"})
	seed(707, true, false, map[string]string{"rootfs": "local-lvm:4"})

	cases := map[string]struct {
		reason     string
		vmid       int
		params     string
		wantStatus int
		wantMsg    string
		wantExit   string
		wantLog    []string
		wantNode   string
		wantPower  string
		wantRootFS string
	}{
		"RunningWithoutMode": {reason: "migrate_vm refuses a running container without online or restart before forking.",
			vmid: 700, params: "target=other", wantStatus: http.StatusInternalServerError,
			wantMsg: "can't migrate running container without --online or --restart", wantNode: "pve", wantPower: "running"},
		"TargetIsLocal": {reason: "The target may not be the source node (a parameter error).",
			vmid: 700, params: "target=pve&restart=1", wantStatus: http.StatusBadRequest, wantMsg: "Parameter verification failed.", wantNode: "pve"},
		"NoSuchNode": {reason: "An unknown target is refused before forking.",
			vmid: 700, params: "target=nowhere&restart=1", wantStatus: http.StatusInternalServerError, wantMsg: "no such cluster node 'nowhere'", wantNode: "pve"},
		"TargetStorageMissing": {reason: "A target storage the target node lacks is refused before forking.",
			vmid: 700, params: "target=other&restart=1&target-storage=nowhere", wantStatus: http.StatusInternalServerError,
			wantMsg: "storage 'nowhere' is not available on node 'other'", wantNode: "pve"},
		"TargetStorageWithoutRootdir": {reason: "A target storage must hold container volumes.",
			vmid: 700, params: "target=other&restart=1&target-storage=local", wantStatus: http.StatusInternalServerError,
			wantMsg: "storage 'local' does not support CT rootdirs", wantNode: "pve"},
		"Live": {reason: "PVE has no live migration for containers: the worker's prepare fails the task, the container keeps running.",
			vmid: 701, params: "target=other&online=1", wantExit: "migration aborted",
			wantLog: []string{"lxc live migration is currently not implemented"}, wantNode: "pve", wantPower: "running"},
		"Restart": {reason: "A restart migration shuts the container down, moves its local volume and starts it on the target.",
			vmid: 702, params: "target=other&restart=1&timeout=30", wantExit: "OK",
			wantLog:  []string{"shutdown CT 702", "found local volume 'local-lvm:vm-702-disk-0'", "start container on target node", "migration finished successfully"},
			wantNode: "other", wantPower: "running", wantRootFS: "local-lvm:vm-702-disk-0"},
		"Offline": {reason: "A stopped container moves offline and stays stopped.",
			vmid: 704, params: "target=other", wantExit: "OK", wantNode: "other", wantPower: "stopped"},
		"BindMount": {reason: "A local bind mount point ties a container to its node.",
			vmid: 705, params: "target=other&restart=1", wantExit: "migration aborted",
			wantLog: []string{"cannot migrate local bind mount point 'mp0'"}, wantNode: "pve", wantPower: "running"},
		"HAManaged": {reason: "An HA resource is handed to the HA manager (hamigrate), which runs a restart migration.",
			vmid: 706, params: "target=other&restart=1", wantExit: "OK", wantLog: []string{"Requesting HA migration for CT 706 to node other"},
			wantNode: "other", wantPower: "running"},
		"TargetStorageMap": {reason: "target-storage maps the local volume onto another storage of the target.",
			vmid: 707, params: "target=other&restart=1&target-storage=shared", wantExit: "OK",
			wantLog: []string{"volume 'local-lvm:vm-707-disk-0' is 'shared:"}, wantNode: "other", wantPower: "running", wantRootFS: "shared:"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := rawCall(t, sim, http.MethodPost, "/nodes/pve/lxc/"+strconv.Itoa(tc.vmid)+"/migrate",
				"application/x-www-form-urlencoded", tc.params, tokenHeader())
			if tc.wantStatus != 0 {
				if res.Status != tc.wantStatus || strings.TrimSpace(res.message()) != tc.wantMsg {
					t.Fatalf("%s\nanswer %d %q, want %d %q", tc.reason, res.Status, res.message(), tc.wantStatus, tc.wantMsg)
				}
			} else {
				upid := migrationTask(t, res, tc.reason)
				status := awaitTask(t, sim, upid)
				if status["exitstatus"] != tc.wantExit {
					t.Errorf("%s\nexit status %q, want %q", tc.reason, status["exitstatus"], tc.wantExit)
				}
				log := taskLogText(t, sim, upid)
				for _, want := range tc.wantLog {
					if !strings.Contains(log, want) {
						t.Errorf("%s\ntask log %q lacks %q", tc.reason, log, want)
					}
				}
			}
			eventually(t, "the container on "+tc.wantNode, func() bool {
				g, _ := sim.Guest(tc.vmid)
				return g.Node == tc.wantNode && g.Config["lock"] == ""
			})
			g, _ := sim.Guest(tc.vmid)
			if tc.wantPower != "" && g.Status != tc.wantPower {
				t.Errorf("%s\npower %s, want %s", tc.reason, g.Status, tc.wantPower)
			}
			if tc.wantRootFS != "" && !strings.HasPrefix(g.Config["rootfs"], tc.wantRootFS) {
				t.Errorf("%s\nrootfs %q, want %q…", tc.reason, g.Config["rootfs"], tc.wantRootFS)
			}
			if tc.wantRootFS != "" && !sim.HasVolume(tc.wantNode, strings.SplitN(g.Config["rootfs"], ",", 2)[0]) {
				t.Errorf("%s\nthe volume of rootfs %q is not on %s", tc.reason, g.Config["rootfs"], tc.wantNode)
			}
		})
	}
}

// migrationTask reads the UPID a migrate request answered.
func migrationTask(t *testing.T, res rawResponse, reason string) string {
	t.Helper()
	var upid string
	if res.Status != http.StatusOK || jsonUnmarshal(res.Body["data"], &upid) != nil {
		t.Fatalf("%s\nmigrate: %d %s", reason, res.Status, res.Text)
	}
	return upid
}

// awaitTask waits for a task to end and returns its status.
func awaitTask(t *testing.T, sim *pvesim.Server, upid string) map[string]any {
	t.Helper()
	var status map[string]any
	eventually(t, "the task ends", func() bool {
		status = getMap(t, sim, "/nodes/pve/tasks/"+url.PathEscape(upid)+"/status")
		return status["status"] == "stopped"
	})
	return status
}
