/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package virtualmachine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func TestCreateClonePersistsVMIDFirstAndConverges(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("web")
	f.store(t, cr, true)
	f.converge(t, cr, 20)

	vmid, ok := guest.VMIDOf(meta.GetExternalName(cr))
	if !ok {
		t.Fatalf("external name %q is not a VMID", meta.GetExternalName(cr))
	}
	stored := &v1alpha1.VirtualMachine{}
	if err := f.kube.Get(context.Background(), client.ObjectKeyFromObject(cr), stored); err != nil {
		t.Fatal(err)
	}
	if meta.GetExternalName(stored) != strconv.Itoa(vmid) {
		t.Errorf("stored external name = %q, want %d", meta.GetExternalName(stored), vmid)
	}
	g, ok := f.sim.Guest(vmid)
	if !ok {
		t.Fatalf("no guest %d", vmid)
	}
	if g.Config["cores"] != "4" || g.Config["memory"] != "4096" || g.Status != "running" {
		t.Errorf("guest not converged: cores=%s memory=%s status=%s", g.Config["cores"], g.Config["memory"], g.Status)
	}
	if !strings.Contains(g.Config["scsi0"], "size=20G") {
		t.Errorf("scsi0 not grown: %s", g.Config["scsi0"])
	}
	if m, ok := guest.ParseMarker(g.Config["description"]); !ok || m != guest.MarkerOf(cr) {
		t.Errorf("marker = %+v %v", m, ok)
	}
	for _, r := range []string{"Cloning", "Configured", "Resized", "Started"} {
		if !f.log.Has(r) {
			t.Errorf("no %s event", r)
		}
	}
	if f.log.Has("DriftCorrected") {
		t.Error("drift warning before the first Ready")
	}
	if len(f.sim.Guests()) != 2 {
		t.Errorf("guests = %d, want template + 1", len(f.sim.Guests()))
	}
}

func TestCreateScratchWithCloudInit(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "scratch", UID: "uid-scratch", Generation: 3},
		Spec: v1alpha1.VirtualMachineSpec{Name: "scratch", NodeName: testNode, ResourceSpec: v1alpha1.ResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}}, VMSpec: &v1alpha1.VirtualMachineScratchSpec{
			VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 2, Socket: 1, Memory: 2048,
				Disk:    []v1alpha1.VirtualMachineDisk{{Storage: "local-lvm", Size: 10, Device: "scsi0"}},
				Network: []v1alpha1.VirtualMachineNetwork{{Model: "virtio", Bridge: "vmbr0"}}},
			CloudInitConfig: &v1alpha1.CloudInitConfig{User: "ubuntu", Password: "pw-123", SSHKeys: []string{"ssh-ed25519 AAAA me@example"},
				DNSServers: []string{"1.1.1.1"}, IPConfig: &v1alpha1.IPConfig{IP: "dhcp"}},
		}},
	}
	f.store(t, cr, true)
	f.converge(t, cr, 20)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	g, _ := f.sim.Guest(vmid)
	if g.Config["ciuser"] != "ubuntu" || g.Config["ipconfig0"] != "ip=dhcp" || g.Config["nameserver"] != "1.1.1.1" {
		t.Errorf("cloud-init keys not set: %v", g.Config)
	}
	if g.Config["cipassword"] == "" {
		t.Error("cipassword not applied")
	}
	if a := cr.Status.CloudInitPasswordApplied; a == nil || a.Generation != 3 {
		t.Errorf("password version not recorded: %+v", a)
	}
	if !f.log.Has("Creating") {
		t.Error("no Creating event")
	}
}

func TestUpdateCorrectsDriftWithWarning(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("drift")
	f.store(t, cr, true)
	f.converge(t, cr, 20)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	mac := f.mac(t, vmid)
	if err := f.sim.SetGuestConfig(vmid, "cores", "1"); err != nil {
		t.Fatal(err)
	}
	if err := f.sim.SetGuestConfig(vmid, "net0", "virtio="+mac+",bridge=vmbr9,firewall=1"); err != nil {
		t.Fatal(err)
	}
	if err := f.sim.SetGuestStatus(vmid, "stopped"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the steady-state resources view is 1s old at most
	f.converge(t, cr, 20)
	g, _ := f.sim.Guest(vmid)
	if g.Config["cores"] != "4" || g.Status != "running" {
		t.Errorf("not corrected: cores=%s status=%s", g.Config["cores"], g.Status)
	}
	if got := g.Config["net0"]; got != "virtio="+mac+",bridge=vmbr0,firewall=1" && g.Pending["net0"] != "virtio="+mac+",bridge=vmbr0,firewall=1" {
		t.Errorf("net0 = %q (pending %q): want bridge corrected, MAC and firewall kept", got, g.Pending["net0"])
	}
	if !f.log.Has("DriftCorrected") {
		t.Error("no DriftCorrected warning")
	}
}

func (f *fixture) mac(t *testing.T, vmid int) string {
	t.Helper()
	g, _ := f.sim.Guest(vmid)
	ps := pve.ParsePropString(g.Config["net0"])
	mac, ok := ps.Get("virtio")
	if !ok {
		t.Fatalf("net0 has no MAC: %s", g.Config["net0"])
	}
	return mac
}

func TestDeleteShutsDownThenDestroys(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("gone")
	f.store(t, cr, true)
	f.converge(t, cr, 20)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	now := metav1.Now()
	cr.DeletionTimestamp = &now
	ctx := context.Background()
	for step := 0; step < 20; step++ {
		e := f.external()
		obs, err := e.Observe(ctx, cr)
		if err != nil {
			t.Fatalf("Observe: %v", err)
		}
		if !obs.ResourceExists {
			break
		}
		if _, err := e.Delete(ctx, cr); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, ok := f.sim.Guest(vmid); ok {
		t.Fatal("guest still exists")
	}
	for _, r := range []string{"ShuttingDown", "Deleting"} {
		if !f.log.Has(r) {
			t.Errorf("no %s event", r)
		}
	}
	if _, ok := f.sim.Guest(templateID); !ok {
		t.Error("template deleted")
	}
}

// ourStarts counts qmstart tasks the provider's token started on vmid.
func (f *fixture) ourStarts(t *testing.T, vmid int) int {
	t.Helper()
	tasks, err := f.cl.GuestTasks(context.Background(), testNode, vmid, 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		u, err := pve.ParseUPID(task.UPID)
		if err != nil {
			t.Fatal(err)
		}
		if task.Type == "qmstart" && strings.Contains(u.User, "!kubemox") {
			n++
		}
	}
	return n
}

func TestPendingChangeAppliedByOneReboot(t *testing.T) {
	// PVE's own start after the reboot takes a while: the provider must not
	// start the VM itself meanwhile.
	f := newFixture(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmstart": 400 * time.Millisecond}})
	cr := cloneVM("reboot")
	f.store(t, cr, true)
	f.converge(t, cr, 60)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	cr.Spec.Template.Cores = 8
	cr.Generation++
	f.converge(t, cr, 200)
	g, _ := f.sim.Guest(vmid)
	if g.Config["cores"] != "8" || g.Status != "running" || len(g.Pending) != 0 {
		t.Errorf("after the reboot: cores=%s status=%s pending=%v", g.Config["cores"], g.Status, g.Pending)
	}
	if !f.log.Has("Rebooted") {
		t.Error("no Rebooted event")
	}
	if f.log.Has("DriftCorrected") {
		t.Error("a spec change was reported as drift")
	}
	if n := f.ourStarts(t, vmid); n != 1 {
		t.Errorf("the provider started the VM %d times, want once (the first start)", n)
	}
}

func TestRebootPolicyNeverReportsPendingKeys(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("noreboot")
	cr.Spec.RebootPolicy = v1alpha1.RebootPolicyNever
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	cr.Spec.Template.Cores = 6
	cr.Generation++
	f.converge(t, cr, 30)
	g, _ := f.sim.Guest(vmid)
	if g.Pending["cores"] != "6" {
		t.Fatalf("cores not pending: config %s pending %v", g.Config["cores"], g.Pending)
	}
	if f.log.Has("Rebooted") {
		t.Error("rebooted although rebootPolicy is Never")
	}
	if fmt.Sprint(cr.Status.PendingChanges) != "[cores]" {
		t.Errorf("status.pendingChanges = %v, want [cores]", cr.Status.PendingChanges)
	}
}

func TestFailedTaskSurfacesOnReady(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("fail")
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	f.sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{Method: "PUT", PathPattern: "/nodes/*/qemu/*/resize", TaskFailureRate: 1, TaskFailureMessage: "storage full"}}})
	cr.Spec.Template.Disk[0].Size = 40
	cr.Generation++
	if !f.reconcileUntil(t, cr, func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "storage full")
	}) {
		t.Fatalf("the failed resize never showed on Ready: %+v", cr.Status.Conditions)
	}
}

// reconcileUntil observes (and updates when not up to date) until ready
// holds for the Ready condition, at most 20 times; it reports whether it did.
func (f *fixture) reconcileUntil(t *testing.T, cr *v1alpha1.VirtualMachine, ready func(xpv2.Condition) bool) bool {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		e := f.external()
		obs, err := e.Observe(ctx, cr)
		if err != nil {
			t.Fatal(err)
		}
		if ready(cr.GetCondition(xpv2.TypeReady)) {
			return true
		}
		if !obs.ResourceUpToDate {
			if _, err := e.Update(ctx, cr); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// An imported VM (external name set by the user, no marker) is adopted; once
// the policies allow updates it is not up to date until our marker is
// written, and the user's notes stay.
func TestImportThenManageWritesMarker(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	seed(t, f, 610, map[string]string{"name": "legacy", "description": "owned by ops", "cores": "2"})
	cr := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "legacy", UID: "uid-legacy"},
		Spec: v1alpha1.VirtualMachineSpec{ResourceSpec: v1alpha1.ResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}}, EnableAutoStart: new(bool)}}
	meta.SetExternalName(cr, "610")
	f.store(t, cr, false)
	e := f.external()
	obs, err := e.Observe(context.Background(), cr)
	if err != nil || !obs.ResourceExists || obs.ResourceUpToDate {
		t.Fatalf("Observe = %+v, %v; want exists and not up to date", obs, err)
	}
	if _, err := e.Update(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	g, _ := f.sim.Guest(610)
	if g.Config["description"] != "owned by ops\n"+guest.MarkerOf(cr).String() {
		t.Errorf("description = %q", g.Config["description"])
	}
	obs, err = f.external().Observe(context.Background(), cr)
	if err != nil || !obs.ResourceUpToDate {
		t.Errorf("after the marker: %+v, %v", obs, err)
	}
	if g.Config["cores"] != "2" || g.Status != "stopped" {
		t.Errorf("adoption changed the VM: cores=%s status=%s", g.Config["cores"], g.Status)
	}
}

// A VM migrated to another node is followed there, never reported absent
// (which would make the reconciler create a second one).
func TestMigratedVMIsFollowed(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("mig")
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	if err := f.sim.MigrateGuest(vmid, "othernode"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		obs, err := f.external().Observe(ctx, cr)
		if err != nil {
			t.Fatal(err)
		}
		if !obs.ResourceExists {
			t.Fatal("a migrated VM was reported absent")
		}
		if cr.Status.Status.Node == "othernode" {
			if n := len(f.sim.Guests()); n != 2 {
				t.Errorf("guests = %d, want template + 1", n)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("node never followed: %+v", cr.Status.Status)
}

// A cloud-init change on a running VM never shows in /pending; PVE's
// /cloudinit has it, and one reboot applies it.
func TestCloudInitChangeOnRunningVMReboots(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("ci-running")
	cr.Spec.Template.CloudInitConfig = &v1alpha1.CloudInitConfig{User: "first"}
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	if f.log.Has("Rebooted") {
		t.Fatal("rebooted before any change")
	}
	cr.Spec.Template.CloudInitConfig.User = "second"
	cr.Generation++
	f.converge(t, cr, 100)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	g, _ := f.sim.Guest(vmid)
	if g.Config["ciuser"] != "second" || g.Status != "running" {
		t.Errorf("ciuser=%s status=%s", g.Config["ciuser"], g.Status)
	}
	if !f.log.Has("Rebooted") {
		t.Error("no reboot for a cloud-init change on a running VM")
	}
	if len(cr.Status.PendingChanges) != 0 {
		t.Errorf("pendingChanges left: %v", cr.Status.PendingChanges)
	}
}

// fullClone: false makes a linked clone of the template.
func TestLinkedClone(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("linked")
	linked := false
	cr.Spec.Template.FullClone = &linked
	cr.Spec.Template.Disk = nil // a linked clone keeps the template's disk
	f.store(t, cr, true)
	f.converge(t, cr, 30)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	g, _ := f.sim.Guest(vmid)
	if !strings.Contains(g.Config["scsi0"], "base-9000-disk") {
		t.Errorf("scsi0 = %q, want a volume linked to the template's base disk", g.Config["scsi0"])
	}
}

// With a lagging /cluster/resources (a new guest lists as "unknown" without
// a name for a while), the VM still converges and exactly one guest exists.
func TestLaggingResourcesListing(t *testing.T) {
	f := newFixture(t, pvesim.Options{ResourcesLag: 2 * time.Second})
	cr := cloneVM("lag")
	f.store(t, cr, true)
	f.converge(t, cr, 200)
	if n := len(f.sim.Guests()); n != 2 {
		t.Errorf("guests = %d, want template + 1", n)
	}
}

// A guest we start is shown running at once, although the lagging listing
// still says stopped; its uptime appears once the listing catches up.
func TestStatusFollowsStartDespiteLaggingListing(t *testing.T) {
	const lag = 2 * time.Second
	f := newFixture(t, pvesim.Options{ResourcesLag: lag})
	cr := cloneVM("late-start")
	off := false
	cr.Spec.EnableAutoStart = &off
	f.store(t, cr, true)
	f.converge(t, cr, 200)
	time.Sleep(lag + time.Second) // the listing now knows the guest as stopped

	on := true
	cr.Spec.EnableAutoStart = &on
	cr.Generation++
	f.converge(t, cr, 200)
	if got := cr.Status.Status.State; got != "running" {
		t.Errorf("status.status.state = %q right after our start, want running", got)
	}

	time.Sleep(lag + time.Second)
	// A Ready VM may reuse a listing as old as its own poll cycle, so the
	// uptime shows by the second poll after the listing caught up.
	for i := 0; i < 2; i++ {
		if _, err := f.external().Observe(context.Background(), cr); err != nil {
			t.Fatalf("Observe: %v", err)
		}
	}
	if cr.Status.Status.State != "running" || cr.Status.Status.Uptime == "" {
		t.Errorf("status.status = %+v, want running with an uptime", cr.Status.Status)
	}
}

// A resource being deleted leaves nothing behind in the per-resource
// memories (poll clock, agent throttle), whichever way it goes.
func TestDeletedResourceIsForgotten(t *testing.T) {
	for _, protected := range []bool{false, true} {
		f := newFixture(t, pvesim.Options{})
		cr := cloneVM(fmt.Sprintf("forget-%v", protected))
		cr.Spec.DeletionProtection = protected
		f.store(t, cr, true)
		f.converge(t, cr, 60)
		if _, err := f.external().Observe(context.Background(), cr); err != nil {
			t.Fatal(err)
		}
		now := metav1.Now()
		cr.SetDeletionTimestamp(&now)
		if _, err := f.external().Observe(context.Background(), cr); err != nil {
			t.Fatal(err)
		}
		// A forgotten resource has no observation stamp (Since is 0) and its
		// agent is due at once, however long the throttle.
		inClock := f.conn.Observed.Since(cr.GetUID(), time.Now()) != 0
		inAgent := !f.conn.agentAsked.Due(cr.GetUID(), time.Now(), time.Hour)
		if inClock || inAgent {
			t.Errorf("protected=%v: deleted resource still remembered (poll clock %v, agent throttle %v)", protected, inClock, inAgent)
		}
	}
}

// Starting a stopped guest reads status/current once per reconcile: Update
// acts on what Observe read.
func TestStartReadsStatusOnce(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("once")
	off := false
	cr.Spec.EnableAutoStart = &off
	f.store(t, cr, true)
	f.converge(t, cr, 60)
	on := true
	cr.Spec.EnableAutoStart = &on
	cr.Generation++
	f.sim.ResetCounters()
	e := f.external()
	obs, err := e.Observe(context.Background(), cr)
	if err != nil || obs.ResourceUpToDate {
		t.Fatalf("Observe = %+v, %v; want a start to do", obs, err)
	}
	if _, err := e.Update(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	c := f.sim.Counters().ByEndpoint
	if n := c["GET /nodes/{node}/qemu/{vmid}/status/current"]; n != 1 {
		t.Errorf("status/current read %d times in one reconcile, want 1", n)
	}
	if n := c["POST /nodes/{node}/qemu/{vmid}/status/start"]; n != 1 {
		t.Errorf("starts = %d, want 1", n)
	}
}

// A create task that fails is reported with PVE's whole reason, in the
// error (the Synced condition) and in status.lastTask, not only its first
// sentence.
func TestFailedCreateTaskSaysWhy(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "huge", UID: "uid-huge", Generation: 1},
		Spec: v1alpha1.VirtualMachineSpec{Name: "huge", NodeName: testNode, ResourceSpec: v1alpha1.ResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}}, VMSpec: &v1alpha1.VirtualMachineScratchSpec{
			VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Socket: 1, Memory: 512,
				Disk: []v1alpha1.VirtualMachineDisk{{Storage: "local-lvm", Size: 1 << 20, Device: "scsi0"}}},
		}},
	}
	f.store(t, cr, true)
	ctx := context.Background()
	if _, err := f.external().Create(ctx, cr); err != nil {
		t.Fatalf("first Create: %v", err)
	}
	vmid := meta.GetExternalName(cr)
	_, err := f.external().Create(ctx, cr)
	want := "Proxmox VE task qmcreate failed: unable to create VM " + vmid + " - not enough free space on storage 'local-lvm'"
	if err == nil || err.Error() != want {
		t.Fatalf("second Create: %v, want %q", err, want)
	}
}

// A start that fails with QEMU's bare exit code is reported with the cause
// PVE logged before it (the missing bridge), on Ready and in the event.
func TestFailedStartQuotesTheTaskLog(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := cloneVM("bridgeless")
	cr.Spec.Template.Network[0].Bridge = "vmbr9"
	cr = ownedAs(t, f, cr, false, map[string]string{"net0": "virtio,bridge=vmbr9"})
	want := "Proxmox VE task qmstart failed: start failed: QEMU exited with code 1 (task log: generating cloud-init ISO; bridge 'vmbr9' does not exist;"
	if !f.reconcileUntil(t, cr, func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.HasPrefix(c.Message, want)
	}) {
		t.Fatalf("the failed start never showed on Ready with its cause: %+v", cr.Status.Conditions)
	}
	if !f.log.Mentions("bridge 'vmbr9' does not exist") {
		t.Errorf("the TaskFailed event lacks the cause: %v", f.log.Reasons())
	}
}
