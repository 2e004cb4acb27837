package pveconformance

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A task's status ends "stopped" with exitstatus OK, or the error for a
// failed worker; its log's last line is "TASK OK" or "TASK ERROR: <exit
// status>" (pve-common src/PVE/RESTEnvironment.pm fork_worker). The node's
// task list filters by vmid and source=all includes finished tasks
// (pve-manager PVE/API2/Tasks.pm node_tasks); the log pages with start and
// limit (read_task_log).
func TestTaskStatusLogAndList(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "GET /nodes/{node}/tasks/{upid}/status", "GET /nodes/{node}/tasks/{upid}/log start limit",
		"GET /nodes/{node}/tasks vmid source limit")
	id := tg.createVM("tasks")
	res := tg.raw(http.MethodPut, tg.guestPath("qemu", id, "/resize"), Params("disk", "scsi0", "size", "512M"))
	upid := res.UPID()
	if exit := tg.task(upid); exit != "shrinking disks is not supported" {
		t.Fatalf("shrink ended %q", exit)
	}
	var st map[string]any
	tg.data("/nodes/"+url.PathEscape(tg.Node())+"/tasks/"+url.PathEscape(upid)+"/status", nil, &st)
	if st["status"] != "stopped" || st["type"] != "resize" || st["id"] != strconv.Itoa(id) || st["upid"] != upid {
		t.Errorf("task status: %v", st)
	}
	log := tg.taskLog(upid)
	if len(log) == 0 || log[len(log)-1] != "TASK ERROR: shrinking disks is not supported" {
		t.Errorf("task log: %q", log)
	}
	var tasks []map[string]any
	tg.data("/nodes/"+url.PathEscape(tg.Node())+"/tasks", Params("vmid", strconv.Itoa(id), "source", "all", "limit", "50"), &tasks)
	types := map[string]string{}
	for _, tk := range tasks {
		if tk["id"] != strconv.Itoa(id) {
			t.Errorf("vmid filter let through %v", tk)
		}
		types[tk["type"].(string)], _ = tk["status"].(string)
	}
	if !strings.HasPrefix(types["qmcreate"], "OK") || types["resize"] != "shrinking disks is not supported" {
		t.Errorf("finished tasks of %d: %v", id, types)
	}
}
