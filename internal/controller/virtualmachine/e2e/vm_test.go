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

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// The seed's sample applies unchanged and converges: a template without a
// name creates the VM from scratch with that hardware on node lowtower.
func TestSeedSample(t *testing.T) {
	hs := require(t)
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "virtualmachine", "clone-new.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &u.Object); err != nil {
		t.Fatal(err)
	}
	if err := hs.Kube.Create(context.Background(), u); err != nil {
		t.Fatalf("apply the seed sample: %v", err)
	}
	vm := hs.waitReady(t, u.GetNamespace(), u.GetName())
	guests := providertest.MarkedGuests(hs.Sim, vm.Namespace, vm.Name)
	if len(guests) != 1 {
		t.Fatalf("guests with the sample's marker = %d, want 1", len(guests))
	}
	g := guests[0]
	if g.Node != node || g.VMID != providertest.VMIDOf(t, vm) || g.Status != "running" {
		t.Errorf("guest %d on %s %s, want %d on %s running", g.VMID, g.Node, g.Status, providertest.VMIDOf(t, vm), node)
	}
	if g.Config["cores"] != "2" || g.Config["sockets"] != "1" || g.Config["memory"] != "4096" || !strings.Contains(g.Config["scsi0"], "size=60G") {
		t.Errorf("hardware not as the sample asks: %v", g.Config)
	}
	hs.WaitEvent(t, vm.Namespace, vm.Name, "CreatingFromScratch", wait)
	if vm.Status.Status.Node != node || vm.Status.Status.State != "running" || int(vm.Status.Status.ID) != g.VMID {
		t.Errorf("status.status = %+v", vm.Status.Status)
	}
	hs.delete(t, vm)
	hs.waitGone(t, vm.Namespace, vm.Name)
	if _, ok := hs.Sim.Guest(g.VMID); ok {
		t.Error("guest survived the deletion")
	}
}

func TestCloneWithConnectionDetailsAndDelete(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	spec := cloneSpec("web")
	spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "web-conn"}
	hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: spec})
	vm := hs.waitReady(t, ns, "web")
	vmid := providertest.VMIDOf(t, vm)
	g, ok := hs.Sim.Guest(vmid)
	if !ok || g.Config["cores"] != "2" || g.Config["memory"] != "2048" || !strings.Contains(g.Config["scsi0"], "size=16G") {
		t.Fatalf("clone not converged: %+v", g)
	}
	hs.WaitEvent(t, ns, "web", "Cloning", wait)
	if missing := managedFieldsMissing(vm); len(missing) > 0 {
		t.Errorf("managed fields lost %v after the provider's updates from its cache, which drops them: %+v", missing, vm.ManagedFields)
	}
	// The guest agent's first IPv4 reaches status and the connection details.
	vm = hs.waitVM(t, ns, "web", "with an IP", func(v *v1alpha1.VirtualMachine) bool { return v.Status.Status.IPAddress != "" })
	sec := &corev1.Secret{}
	deadline := time.Now().Add(wait)
	for {
		if err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web-conn"}, sec); err == nil && len(sec.Data["ipAddress"]) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection secret without ipAddress: %v", keysOf(sec.Data))
		}
		time.Sleep(250 * time.Millisecond)
	}
	if string(sec.Data["vmid"]) != fmt.Sprint(vmid) || string(sec.Data["node"]) != node || string(sec.Data["name"]) != "web" ||
		string(sec.Data["ipAddress"]) != vm.Status.Status.IPAddress || len(sec.Data["endpoint"]) == 0 {
		t.Errorf("connection details = %v", keysOf(sec.Data))
	}
	for k, v := range sec.Data {
		if strings.Contains(string(v), currentSecret) {
			t.Errorf("connection detail %s carries a Proxmox credential", k)
		}
	}
	hs.delete(t, vm)
	hs.waitGone(t, ns, "web")
	if _, ok := hs.Sim.Guest(vmid); ok {
		t.Error("guest survived the deletion")
	}
	hs.WaitEvent(t, ns, "web", "Deleting", wait)
}

// managedFieldsMissing names which of the VM's writers the API server no
// longer records as owning their fields: the creator (the spec), the
// provider's metadata updates (the finalizer) and its status updates.
func managedFieldsMissing(vm *v1alpha1.VirtualMachine) []string {
	want := map[string]bool{"spec": false, "finalizers": false, "status": false}
	for _, e := range vm.ManagedFields {
		if e.FieldsV1 == nil {
			continue
		}
		fields := string(e.FieldsV1.Raw)
		want["spec"] = want["spec"] || strings.Contains(fields, `"f:spec"`)
		want["finalizers"] = want["finalizers"] || strings.Contains(fields, `"f:finalizers"`)
		want["status"] = want["status"] || (e.Subresource == "status" && strings.Contains(fields, `"f:status"`))
	}
	var missing []string
	for w, ok := range want {
		if !ok {
			missing = append(missing, w)
		}
	}
	slices.Sort(missing)
	return missing
}

func keysOf(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestScratchWithCloudInitPasswordFromSecret(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	if err := hs.Kube.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ci"},
		StringData: map[string]string{"pw": cloudInitPassword}}); err != nil {
		t.Fatal(err)
	}
	vm := hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ci-vm"}, Spec: v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{
			ConnectionRef:                    &v1alpha1.ConnectionReference{Name: connName},
			WriteConnectionSecretToReference: &xpv2.LocalSecretReference{Name: "ci-vm-conn"},
		},
		Name: "ci-vm", NodeName: node,
		VMSpec: &v1alpha1.VirtualMachineScratchSpec{
			VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Socket: 1, Memory: 1024,
				Disk:    []v1alpha1.VirtualMachineDisk{{Storage: "local-lvm", Size: 8, Device: "scsi0"}},
				Network: []v1alpha1.VirtualMachineNetwork{{Model: "virtio", Bridge: "vmbr0"}}},
			CloudInitConfig: &v1alpha1.CloudInitConfig{User: "ops", PasswordFrom: &v1alpha1.OptionalSecretKeySelector{LocalSecretKeySelector: v1alpha1.LocalSecretKeySelector{Name: "ci", Key: "pw"}},
				SSHKeys: []string{"ssh-ed25519 AAAAC3Nza me@example"}, DNSDomain: "example.org", DNSServers: []string{"9.9.9.9"},
				IPConfig: &v1alpha1.IPConfig{IP: "192.0.2.10", CIDR: "24", Gateway: "192.0.2.1"}},
		},
	}})
	vm = hs.waitReady(t, ns, vm.Name)
	g, _ := hs.Sim.Guest(providertest.VMIDOf(t, vm))
	if g.Config["ciuser"] != "ops" || g.Config["ipconfig0"] != "ip=192.0.2.10/24,gw=192.0.2.1" || g.Config["searchdomain"] != "example.org" {
		t.Errorf("cloud-init not configured: %v", g.Config)
	}
	if g.Config["cipassword"] == "" {
		t.Error("cipassword not applied")
	}
	if a := vm.Status.CloudInitPasswordApplied; a == nil || a.SecretResourceVersion == "" {
		t.Errorf("password version not recorded: %+v", a)
	}
	sec := &corev1.Secret{}
	if err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "ci-vm-conn"}, sec); err != nil {
		t.Fatal(err)
	}
	if string(sec.Data["username"]) != "ops" || string(sec.Data["password"]) != cloudInitPassword {
		t.Errorf("cloud-init credentials not in connection details: %v", keysOf(sec.Data))
	}

	// Polls of an unchanged Secret do not read it again; a new revision is
	// read and applied at the next poll.
	reads := hs.Requests.SecretGets(ns, "ci")
	time.Sleep(poll + 5*time.Second)
	if n := hs.Requests.SecretGets(ns, "ci") - reads; n != 0 {
		t.Errorf("the unchanged passwordFrom Secret was read %d times over a poll interval, want 0", n)
	}
	applied := vm.Status.CloudInitPasswordApplied.SecretResourceVersion
	s := &corev1.Secret{}
	if err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "ci"}, s); err != nil {
		t.Fatal(err)
	}
	s.Data = map[string][]byte{"pw": []byte(cloudInitPassword + "-2")}
	if err := hs.Kube.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	hs.waitVM(t, ns, vm.Name, "the new Secret revision applied", func(vm *v1alpha1.VirtualMachine) bool {
		a := vm.Status.CloudInitPasswordApplied
		return a != nil && a.SecretResourceVersion == s.ResourceVersion && a.SecretResourceVersion != applied
	})
}

// Drift made behind the provider's back (cores, a NIC's bridge with an
// extra option, a stopped VM) is corrected, with a Warning naming the
// fields; the option nobody manages and the MAC are kept.
func TestDriftCorrected(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	vm := hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drift"}, Spec: cloneSpec("drift")})
	vm = hs.waitReady(t, ns, vm.Name)
	vmid := providertest.VMIDOf(t, vm)
	g, _ := hs.Sim.Guest(vmid)
	mac := strings.TrimPrefix(strings.Split(g.Config["net0"], ",")[0], "virtio=")
	for k, v := range map[string]string{"cores": "1", "net0": "virtio=" + mac + ",bridge=vmbr7,firewall=1"} {
		if err := hs.Sim.SetGuestConfig(vmid, k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := hs.Sim.SetGuestStatus(vmid, "stopped"); err != nil {
		t.Fatal(err)
	}
	e := hs.WaitEvent(t, ns, vm.Name, "DriftCorrected", wait)
	if e.Type != corev1.EventTypeWarning || !strings.Contains(e.Message, "cores") || !strings.Contains(e.Message, "net0") {
		t.Errorf("drift event = %s %q", e.Type, e.Message)
	}
	deadline := time.Now().Add(wait)
	for {
		g, _ = hs.Sim.Guest(vmid)
		net0 := g.Config["net0"]
		if p, ok := g.Pending["net0"]; ok {
			net0 = p
		}
		if g.Config["cores"] == "2" && g.Status == "running" && net0 == "virtio="+mac+",bridge=vmbr0,firewall=1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("drift not corrected: cores=%s status=%s net0=%q", g.Config["cores"], g.Status, net0)
		}
		time.Sleep(250 * time.Millisecond)
	}
	hs.WaitEvent(t, ns, vm.Name, "Started", wait)
}

func TestDeletionProtectionKeepsTheVM(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	spec := cloneSpec("keep")
	spec.DeletionProtection = true
	vm := hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keep"}, Spec: spec})
	vm = hs.waitReady(t, ns, vm.Name)
	vmid := providertest.VMIDOf(t, vm)
	hs.delete(t, vm)
	hs.waitGone(t, ns, vm.Name)
	if g, ok := hs.Sim.Guest(vmid); !ok || g.Status != "running" {
		t.Errorf("protected VM %d was touched: exists=%v status=%s", vmid, ok, g.Status)
	}
}

// An existing VM imported with managementPolicies ["Observe"] fills status
// and changes nothing in Proxmox.
func TestImportObserveOnly(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	cfg := map[string]string{"name": "legacy", "cores": "3", "memory": "1024", "net0": "virtio,bridge=vmbr0", "description": "hand made"}
	// The guest outlives the test (an Observe-only resource leaves it), so
	// a second run (-count=2) imports another one.
	vmid := providertest.FreeVMID(t, hs.Sim, 700)
	if err := hs.Sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: node, VMID: vmid, Config: cfg, Running: true}); err != nil {
		t.Fatal(err)
	}
	before, _ := hs.Sim.Guest(vmid)
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy"}, Spec: v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{
			ConnectionRef:      &v1alpha1.ConnectionReference{Name: connName},
			ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve},
		},
	}}
	meta.SetExternalName(vm, strconv.Itoa(vmid))
	hs.create(t, vm)
	vm = hs.waitVM(t, ns, vm.Name, "Ready with status", func(v *v1alpha1.VirtualMachine) bool {
		return ready(v) && int(v.Status.Status.ID) == vmid && v.Status.Status.Node == node && v.Status.Status.State == "running"
	})
	time.Sleep(6 * time.Second)
	after, _ := hs.Sim.Guest(vmid)
	if fmt.Sprint(before.Config) != fmt.Sprint(after.Config) || after.Status != "running" {
		t.Errorf("imported VM changed:\nbefore %v\nafter  %v", before.Config, after.Config)
	}
	hs.delete(t, vm)
	hs.waitGone(t, ns, vm.Name)
	if _, ok := hs.Sim.Guest(vmid); !ok {
		t.Error("an Observe-only resource deleted its VM")
	}
}

// Fifty clones of one template at once all become Ready, and none of them
// ever shows an error condition (a lock or VMID race is not an error).
// parallelWait bounds the fifty clones.
var parallelWait = 3 * wait

func TestFiftyParallelClones(t *testing.T) {
	hs := require(t)
	if testing.Short() {
		t.Skip("-short: fifty clones take a while on 2 cores")
	}
	ns := hs.namespace(t)
	const n = 50
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("par-%02d", i)
		hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: cloneSpec(name)})
	}
	var mu sync.Mutex
	errorsSeen := map[string]string{}
	deadline := time.Now().Add(parallelWait)
	for {
		l := &v1alpha1.VirtualMachineList{}
		if err := hs.Kube.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		readyCount := 0
		for i := range l.Items {
			vm := &l.Items[i]
			if c := vm.GetCondition(xpv2.TypeSynced); c.Status == corev1.ConditionFalse {
				mu.Lock()
				errorsSeen[vm.Name] = c.Message
				mu.Unlock()
			}
			if ready(vm) {
				readyCount++
			}
		}
		if readyCount == n {
			break
		}
		if time.Now().After(deadline) {
			for i := range l.Items {
				if vm := &l.Items[i]; !ready(vm) {
					t.Logf("%s: annotations %v conditions %+v lastTask %+v", vm.Name, vm.Annotations, vm.Status.Conditions, vm.Status.LastTask)
				}
			}
			t.Fatalf("%d/%d Ready after %s; error conditions seen: %v", readyCount, n, parallelWait, errorsSeen)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if len(errorsSeen) > 0 {
		t.Errorf("error conditions seen along the way: %v", errorsSeen)
	}
	vmids := map[int]string{}
	l := &v1alpha1.VirtualMachineList{}
	if err := hs.Kube.List(context.Background(), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		vm := &l.Items[i]
		if other, dup := vmids[providertest.VMIDOf(t, vm)]; dup {
			t.Errorf("%s and %s share VMID %d", vm.Name, other, providertest.VMIDOf(t, vm))
		}
		vmids[providertest.VMIDOf(t, vm)] = vm.Name
		if got := len(providertest.MarkedGuests(hs.Sim, vm.Namespace, vm.Name)); got != 1 {
			t.Errorf("%s: %d guests carry its marker, want 1", vm.Name, got)
		}
	}
}

// kubemox's reconcile-mode annotation narrows what the provider does:
// WatchOnly leaves drift alone; back to Reconcile, it is corrected.
func TestReconcileModeWatchOnly(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	vm := hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "watch"}, Spec: cloneSpec("watch")})
	vm = hs.waitReady(t, ns, vm.Name)
	vmid := providertest.VMIDOf(t, vm)
	setMode := func(mode string) {
		t.Helper()
		cur := &v1alpha1.VirtualMachine{}
		if err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: vm.Name}, cur); err != nil {
			t.Fatal(err)
		}
		meta.AddAnnotations(cur, map[string]string{v1alpha1.AnnotationReconcileMode: mode})
		if err := hs.Kube.Update(context.Background(), cur); err != nil {
			t.Fatal(err)
		}
	}
	if err := hs.Sim.SetGuestConfig(vmid, "cores", "1"); err != nil {
		t.Fatal(err)
	}
	setMode(v1alpha1.ReconcileModeWatchOnly) // an annotation change reconciles at once
	time.Sleep(6 * time.Second)
	if g, _ := hs.Sim.Guest(vmid); g.Config["cores"] != "1" {
		t.Fatalf("WatchOnly corrected drift: cores=%s", g.Config["cores"])
	}
	setMode(v1alpha1.ReconcileModeReconcile)
	deadline := time.Now().Add(wait)
	for {
		if g, _ := hs.Sim.Guest(vmid); g.Config["cores"] == "2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("drift not corrected after leaving WatchOnly")
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Clones that PVE answers with a lock timeout (another clone holds the
// template) or whose task loses a VMID race are retried quietly: every VM
// becomes Ready, none shows an error condition, and no VMID is shared.
func TestParallelClonesThroughLocksAndRaces(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	hs.Sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{
		{Method: "POST", PathPattern: "/nodes/*/qemu/*/clone", ErrorRate: 0.3, Status: 500,
			Message:         "can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout",
			TaskFailureRate: 0.4, TaskFailureMessage: "unable to create VM: config file already exists"},
	}})
	defer hs.Sim.SetFaults(pvesim.Faults{})
	const n = 15
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("lock-%02d", i)
		hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: cloneSpec(name)})
	}
	errorsSeen := map[string]string{}
	deadline := time.Now().Add(parallelWait)
	for {
		l := &v1alpha1.VirtualMachineList{}
		if err := hs.Kube.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		readyCount := 0
		for i := range l.Items {
			vm := &l.Items[i]
			if c := vm.GetCondition(xpv2.TypeSynced); c.Status == corev1.ConditionFalse {
				errorsSeen[vm.Name] = c.Message
			}
			if ready(vm) {
				readyCount++
			}
		}
		if readyCount == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d/%d Ready after %s; error conditions: %v", readyCount, n, parallelWait, errorsSeen)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if len(errorsSeen) > 0 {
		t.Errorf("error conditions seen along the way: %v", errorsSeen)
	}
	l := &v1alpha1.VirtualMachineList{}
	if err := hs.Kube.List(context.Background(), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		if got := len(providertest.MarkedGuests(hs.Sim, l.Items[i].Namespace, l.Items[i].Name)); got != 1 {
			t.Errorf("%s: %d guests carry its marker, want 1", l.Items[i].Name, got)
		}
	}
	counts := map[string]int{}
	for _, e := range hs.Events(t, ns, "") {
		counts[e.Reason] += int(e.Count)
	}
	t.Logf("lock answers retried: %d; lost VMID races retried: %d", counts["SourceBusy"], counts["VMIDTaken"])
}
