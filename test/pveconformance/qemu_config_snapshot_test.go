package pveconformance

import (
	"net/http"
	"strings"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// status is a guest's status/current.
func (c *tcase) status(kind string, vmid int) map[string]any {
	c.t.Helper()
	var st map[string]any
	c.data(c.guestPath(kind, vmid, "/status/current"), nil, &st)
	return st
}

// On a running VM, POST config (a task) and PUT config change keys; what
// cannot be hot-plugged stays pending while name applies at once, and
// cloud-init keys never show in /pending but in /cloudinit (qemu-server
// src/PVE/API2/Qemu.pm $update_vm_api, vm_pending, cloudinit_pending;
// src/PVE/QemuServer.pm vmconfig_hotplug_pending,
// cloudinit_pending_properties). GET config applies pending values unless
// current=1 and masks cipassword as '**********' (vm_config). A reboot
// shuts the VM down and qmeventd starts it again, applying what was
// pending (src/PVE/QemuServer.pm vm_reboot: "Applies pending changes").
func TestQemuConfigAsyncSyncPendingAndReboot(t *testing.T) {
	tg := target(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmstart": 300 * time.Millisecond}})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/config cores name ciuser", "PUT /nodes/{node}/qemu/{vmid}/config memory",
		"GET /nodes/{node}/qemu/{vmid}/pending", "GET /nodes/{node}/qemu/{vmid}/cloudinit", "POST /nodes/{node}/qemu/{vmid}/status/reboot")
	id := tg.createVM("pending", "cores", "2", "ide2", tg.Storage()+":cloudinit", "ciuser", "old", "cipassword", "not-a-secret-1")
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/start"), nil)
	t.Cleanup(func() { tg.destroy("qemu", id) }) // stopped first, before createVM's
	vm := tg.goClient().NodeRef(tg.Node()).VirtualMachineRef(id)
	task, err := vm.Config(tg.ctx(), proxmox.VirtualMachineOption{Name: "cores", Value: 4}, proxmox.VirtualMachineOption{Name: "name", Value: tg.GuestName("renamed")},
		proxmox.VirtualMachineOption{Name: "ciuser", Value: "new"})
	tg.goMust("POST config", task, err)
	if err := vm.ConfigSync(tg.ctx(), proxmox.VirtualMachineOption{Name: "memory", Value: "1024"}); err != nil {
		t.Fatalf("PUT config: %v", err)
	}
	pending, err := vm.Pending(tg.ctx())
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]proxmox.PendingConfigItem{}
	for _, it := range *pending {
		byKey[it.Key] = it
	}
	if byKey["cores"].Pending != float64(4) || byKey["cores"].Value != float64(2) || byKey["memory"].Pending != "1024" {
		t.Errorf("pending cores/memory: %+v %+v", byKey["cores"], byKey["memory"])
	}
	if byKey["name"].Pending != nil || byKey["name"].Value != tg.GuestName("renamed") || byKey["ciuser"].Pending != nil {
		t.Errorf("name applies live and cloud-init keys never show in /pending: %+v %+v", byKey["name"], byKey["ciuser"])
	}
	if cur := tg.config("qemu", id, Params("current", "1")); cur["cores"] != float64(2) {
		t.Errorf("current=1 cores %v", cur["cores"])
	}
	if def := tg.config("qemu", id, nil); def["cores"] != float64(4) || def["cipassword"] != "**********" {
		t.Errorf("the default config applies pending and masks cipassword: %v", def)
	}
	ci, err := vm.CloudInitPending(tg.ctx())
	if err != nil {
		t.Fatal(err)
	}
	ciByKey := map[string]*proxmox.VirtualMachineCloudInitPending{}
	for _, it := range ci {
		ciByKey[it.Key] = it
	}
	if it := ciByKey["ciuser"]; it == nil || it.Value != "old" || it.Pending != "new" {
		t.Errorf("cloudinit pending: %+v", ci)
	}
	if it := ciByKey["cipassword"]; it == nil || it.Value != "**********" {
		t.Errorf("cipassword masked: %+v", it)
	}

	task, err = vm.Reboot(tg.ctx())
	tg.goMust("reboot", task, err)
	tg.eventually("the VM running again after the reboot", func() bool { return tg.status("qemu", id)["status"] == "running" })
	if cur := tg.config("qemu", id, Params("current", "1")); cur["cores"] != float64(4) || cur["memory"] != "1024" {
		t.Errorf("pending applied by the reboot: %v", cur)
	}
	ci, _ = vm.CloudInitPending(tg.ctx())
	for _, it := range ci {
		if it.Pending != "" {
			t.Errorf("cloud-init pending after the reboot: %+v", it)
		}
	}
	// PVE::Tools assert_if_modified.
	err = vm.ConfigSync(tg.ctx(), proxmox.VirtualMachineOption{Name: "digest", Value: "0123456789abcdef0123456789abcdef01234567"}, proxmox.VirtualMachineOption{Name: "cores", Value: 1})
	if ae := tg.apiErr(err); strings.TrimSpace(ae.Message) != "detected modified configuration - file changed by other user? Try again." {
		t.Errorf("digest: %v", err)
	}
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/stop"), nil)
}

// A snapshot locks the VM "snapshot" while it runs (pve-guest-common
// src/PVE/AbstractConfig.pm snapshot_prepare) and lists before "current"
// ("You are here!", parent the newest; qemu-server src/PVE/API2/Qemu.pm
// snapshot_list); a rollback restores the config and, the snapshot having
// no vmstate, leaves the VM stopped (AbstractConfig.pm snapshot_rollback);
// template refuses a VM with snapshots ("unable to create template,
// because VM contains snapshots") or running ("you can't convert a VM to
// template if VM is running", Qemu.pm template); destroy refuses a running
// VM ("VM N is running - destroy failed", destroy_vm) and a protected one
// ("can't remove VM N - protection mode enabled", AbstractConfig.pm
// check_protection); a destroyed VM's config is 500 "Configuration file
// 'nodes/<node>/qemu-server/N.conf' does not exist" (load_config), which
// go-proxmox reports as not found.
func TestQemuSnapshotsTemplateAndDelete(t *testing.T) {
	tg := target(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmsnapshot": 300 * time.Millisecond}})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/snapshot snapname", "GET /nodes/{node}/qemu/{vmid}/snapshot",
		"POST /nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback", "DELETE /nodes/{node}/qemu/{vmid}/snapshot/{snapname}",
		"POST /nodes/{node}/qemu/{vmid}/template", "DELETE /nodes/{node}/qemu/{vmid} purge")
	id := tg.createVM("snapdel", "protection", "1")
	tg.unprotect("qemu", id)
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/start"), nil)
	ctx := tg.ctx()
	vm := tg.goClient().NodeRef(tg.Node()).VirtualMachineRef(id)

	task, err := vm.NewSnapshot(ctx, "before")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tg.Sim(); ok { // a real snapshot may end before the lock is seen
		tg.eventually("the snapshot lock", func() bool { return tg.config("qemu", id, nil)["lock"] == "snapshot" })
	}
	tg.goMust("snapshot", task, nil)
	snaps, err := vm.Snapshots(ctx)
	if err != nil || len(snaps) != 2 || snaps[0].Name != "before" || snaps[1].Name != "current" || snaps[1].Description != "You are here!" || snaps[1].Parent != "before" {
		t.Fatalf("snapshots: %v %+v", err, snaps)
	}
	if err := vm.ConfigSync(ctx, proxmox.VirtualMachineOption{Name: "description", Value: "after"}); err != nil {
		t.Fatal(err)
	}
	task, err = vm.Snapshot("before").Rollback(ctx)
	tg.goMust("rollback", task, err)
	if cfg, st := tg.config("qemu", id, nil), tg.status("qemu", id); cfg["description"] != nil || st["status"] != "stopped" {
		t.Errorf("rollback restores the config and stops a VM without vmstate: description %v, %v", cfg["description"], st["status"])
	}
	_, err = vm.ConvertToTemplate(ctx)
	if ae := tg.apiErr(err); strings.TrimSpace(ae.Message) != "unable to create template, because VM contains snapshots" {
		t.Errorf("template with snapshots: %v", err)
	}
	task, err = vm.Snapshot("before").Delete(ctx)
	tg.goMust("delete snapshot", task, err)

	task, err = vm.Start(ctx)
	tg.goMust("start", task, err)
	_, err = vm.ConvertToTemplate(ctx)
	if ae := tg.apiErr(err); strings.TrimSpace(ae.Message) != "you can't convert a VM to template if VM is running" {
		t.Errorf("template of a running VM: %v", err)
	}
	_, err = vm.Delete(ctx, nil)
	if ae := tg.apiErr(err); strings.TrimSpace(ae.Message) != "VM "+itoa(id)+" is running - destroy failed" {
		t.Errorf("destroy running: %v", err)
	}
	task, err = vm.Stop(ctx)
	tg.goMust("stop", task, err)
	_, err = vm.Delete(ctx, nil)
	if ae := tg.apiErr(err); strings.TrimSpace(ae.Message) != "can't remove VM "+itoa(id)+" - protection mode enabled" {
		t.Errorf("destroy protected: %v", err)
	}
	if err := vm.ConfigSync(ctx, proxmox.VirtualMachineOption{Name: "delete", Value: "protection"}); err != nil {
		t.Fatal(err)
	}
	task, err = vm.ConvertToTemplate(ctx)
	tg.goMust("template", task, err)
	if st := tg.status("qemu", id); st["template"] != float64(1) {
		t.Errorf("template flag: %v", st["template"])
	}
	task, err = vm.Delete(ctx, &proxmox.VirtualMachineDeleteOptions{Purge: true})
	tg.goMust("delete", task, err)
	_, err = tg.goClient().NodeRef(tg.Node()).VirtualMachine(ctx, id)
	want := "Configuration file 'nodes/" + tg.Node() + "/qemu-server/" + itoa(id) + ".conf' does not exist"
	if ae := tg.apiErr(err); ae.StatusCode != http.StatusInternalServerError || strings.TrimSpace(ae.Message) != want || !proxmox.IsNotFound(err) {
		t.Errorf("after delete: %v", err)
	}
}

// The agent commands answer by the VM's state (qemu-server
// src/PVE/QemuServer/Agent.pm assert_agent_available): "No QEMU guest
// agent configured" without agent, "VM N is not running" when stopped,
// "QEMU guest agent is not running" until the agent answers; then
// network-get-interfaces lists lo first (the agent's own order).
func TestQemuGuestAgentErrorsThenAnswers(t *testing.T) {
	tg := target(t, pvesim.Options{AgentStartDelay: 300 * time.Millisecond})
	covers(tg, "GET /nodes/{node}/qemu/{vmid}/agent/network-get-interfaces")
	ctx := tg.ctx()
	plain := tg.createVM("noagent")
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", plain, "/status/start"), nil)
	t.Cleanup(func() { tg.destroy("qemu", plain) })
	_, err := tg.goClient().NodeRef(tg.Node()).VirtualMachineRef(plain).AgentOsInfo(ctx)
	if ae := tg.apiErr(err); strings.TrimSpace(ae.Message) != "No QEMU guest agent configured" {
		t.Errorf("no agent: %v", err)
	}
	id := tg.createVM("agent", "agent", "enabled=1")
	vm := tg.goClient().NodeRef(tg.Node()).VirtualMachineRef(id)
	_, err = vm.AgentGetNetworkIFaces(ctx)
	if ae := tg.apiErr(err); strings.TrimSpace(ae.Message) != "VM "+itoa(id)+" is not running" {
		t.Errorf("stopped: %v", err)
	}
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/status/start"), nil)
	t.Cleanup(func() { tg.destroy("qemu", id) })
	_, err = vm.AgentGetNetworkIFaces(ctx)
	if ae := tg.apiErr(err); strings.TrimSpace(ae.Message) != "QEMU guest agent is not running" {
		t.Errorf("agent not answering yet: %v", err)
	}
	tg.requireSim("a guest whose agent starts answering (Options.AgentStartDelay); the suite's VMs boot no OS")
	time.Sleep(350 * time.Millisecond)
	var raw map[string][]map[string]any
	tg.data(tg.guestPath("qemu", id, "/agent/network-get-interfaces"), nil, &raw)
	if len(raw["result"]) == 0 || raw["result"][0]["name"] != "lo" {
		t.Errorf("lo first: %v", raw)
	}
	ifaces, err := vm.AgentGetNetworkIFaces(ctx)
	if err != nil || len(ifaces) != 1 || len(ifaces[0].IPAddresses) == 0 || ifaces[0].HardwareAddress == "" {
		t.Errorf("interfaces: %v %+v", err, ifaces)
	}
}
