package pveconformance

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A VM made a template (qemu-server PVE/API2/Qemu.pm template: its disks
// become base-<vmid>-disk-<n>) clones linked by default and full on
// request (clone_vm), with the name, description and pool given; the clone
// gets its own MAC; a template does not start ("you can't start a vm if
// it's a template", vm_start).
func TestQemuTemplateAndClones(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/template",
		"POST /nodes/{node}/qemu/{vmid}/clone newid full name description target storage pool")
	src := tg.createVM("tmpl")
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", src, "/template"), nil)
	var srcCfg map[string]any
	tg.data(tg.guestPath("qemu", src, "/config"), nil, &srcCfg)
	if srcCfg["template"] != float64(1) || !strings.Contains(srcCfg["scsi0"].(string), "base-"+strconv.Itoa(src)+"-disk-0") {
		t.Fatalf("template config: %v", srcCfg)
	}
	start := tg.raw(http.MethodPost, tg.guestPath("qemu", src, "/status/start"), nil)
	if exit := tg.task(start.UPID()); exit != "you can't start a vm if it's a template" {
		t.Errorf("start of a template ended %q", exit)
	}

	linked := tg.vmid()
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", src, "/clone"), Params("newid", strconv.Itoa(linked), "name", tg.GuestName("linked"),
		"description", "linked clone", "pool", tg.Pool(), "full", "0", "target", tg.Node()))
	t.Cleanup(func() { tg.destroy("qemu", linked) })
	full := tg.vmid()
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", src, "/clone"), Params("newid", strconv.Itoa(full), "name", tg.GuestName("full"),
		"pool", tg.Pool(), "full", "1", "storage", tg.Storage()))
	t.Cleanup(func() { tg.destroy("qemu", full) })

	var l, f map[string]any
	tg.data(tg.guestPath("qemu", linked, "/config"), nil, &l)
	tg.data(tg.guestPath("qemu", full, "/config"), nil, &f)
	// The linked disk's name depends on the storage (pve-storage
	// LvmThinPlugin.pm clone_image answers vm-<newid>-disk-<n>; Plugin.pm's
	// qcow2 clone_image base-<id>-disk-<n>/vm-<newid>-disk-<n>).
	if l["name"] != tg.GuestName("linked") || l["description"] != "linked clone" || !strings.Contains(l["scsi0"].(string), "vm-"+strconv.Itoa(linked)+"-disk-0") {
		t.Errorf("linked clone: %v", l)
	}
	if strings.Contains(f["scsi0"].(string), "base-") || !strings.Contains(f["scsi0"].(string), "vm-"+strconv.Itoa(full)+"-disk-0") {
		t.Errorf("full clone disk: %v", f["scsi0"])
	}
	if l["net0"] == srcCfg["net0"] {
		t.Error("a clone must get its own MAC")
	}
	if l["lock"] != nil || f["lock"] != nil {
		t.Errorf("locks left after the clones: %v %v", l["lock"], f["lock"])
	}
}

// Snapshots: taken in a task, listed with "current" last ("You are here!",
// parent the newest; pve-guest-common PVE/AbstractConfig.pm snapshot_list
// via qemu-server PVE/API2/Qemu.pm snapshot_list), each with vmstate;
// "current" is a reserved name (snapshot_create: "unable to use snapshot
// name 'current' (reserved name)"); a description changes with PUT
// snapshot/{snapname}/config; a rollback restores the config; a guest with
// snapshots is not made a template ("unable to create template, because VM
// contains snapshots", template).
func TestQemuSnapshots(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/snapshot snapname description vmstate", "GET /nodes/{node}/qemu/{vmid}/snapshot",
		"PUT /nodes/{node}/qemu/{vmid}/snapshot/{snapname}/config description", "POST /nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback",
		"DELETE /nodes/{node}/qemu/{vmid}/snapshot/{snapname}")
	id := tg.createVM("snap", "description", "before")
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/snapshot"), Params("snapname", "first", "description", "one"))
	res := tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/snapshot"), Params("snapname", "current"))
	if res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != "unable to use snapshot name 'current' (reserved name)" {
		t.Errorf("reserved name: %s %q", res.StatusLine, res.Message())
	}
	var snaps []map[string]any
	tg.data(tg.guestPath("qemu", id, "/snapshot"), nil, &snaps)
	if len(snaps) != 2 || snaps[0]["name"] != "first" || snaps[0]["description"] != "one" || snaps[1]["name"] != "current" ||
		snaps[1]["description"] != "You are here!" || snaps[1]["parent"] != "first" {
		t.Fatalf("snapshot list: %v", snaps)
	}
	if res := tg.raw(http.MethodPut, tg.guestPath("qemu", id, "/snapshot/first/config"), Params("description", "renamed")); res.Status != http.StatusOK {
		t.Fatalf("PUT snapshot config: %s", res.StatusLine)
	}
	if res := tg.raw(http.MethodPut, tg.guestPath("qemu", id, "/config"), Params("description", "after")); res.Status != http.StatusOK {
		t.Fatal(res.StatusLine)
	}
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/snapshot/first/rollback"), nil)
	var cfg map[string]any
	tg.data(tg.guestPath("qemu", id, "/config"), nil, &cfg)
	if strings.TrimSpace(cfg["description"].(string)) != "before" {
		t.Errorf("rollback restores the config: description %q", cfg["description"])
	}
	res = tg.raw(http.MethodPost, tg.guestPath("qemu", id, "/template"), nil)
	if res.Status != http.StatusInternalServerError || strings.TrimSpace(res.Message()) != "unable to create template, because VM contains snapshots" {
		t.Errorf("template with snapshots: %s %q", res.StatusLine, res.Message())
	}
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/start"), nil)
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/snapshot"), Params("snapname", "withram", "vmstate", "1"))
	tg.data(tg.guestPath("qemu", id, "/snapshot"), nil, &snaps)
	for _, s := range snaps {
		if s["name"] == "withram" && s["vmstate"] != float64(1) {
			t.Errorf("snapshot with RAM lists vmstate 1: %v", s)
		}
		if s["name"] == "first" && s["description"] != "renamed" {
			t.Errorf("description after PUT: %v", s)
		}
	}
	tg.mustTask(http.MethodDelete, tg.guestPath("qemu", id, "/snapshot/withram"), nil)
	tg.mustTask(http.MethodDelete, tg.guestPath("qemu", id, "/snapshot/first"), nil)
}
