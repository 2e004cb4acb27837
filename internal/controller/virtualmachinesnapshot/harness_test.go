package virtualmachinesnapshot

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis"
	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	testNode  = "lowtower"
	otherNode = "pve"
	guestID   = 700
	vmName    = "web"
)

// fixture is the simulator with one QEMU guest, a client to it, and an
// object store holding the VirtualMachine that owns the guest.
type fixture struct {
	sim  *pvesim.Server
	cl   *pve.Client
	kube client.Client
	log  *guesttest.EventLog
	ref  pve.GuestRef
}

func newFixture(t *testing.T, opts pvesim.Options) *fixture {
	t.Helper()
	opts.Nodes = []string{testNode, otherNode}
	sim, err := pvesim.Start(opts)
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	t.Cleanup(sim.Close)
	sim.AddToken("root@pam!kubemox", "s3cret")
	if err := sim.AddGuest(pvesim.GuestSeed{Node: testNode, VMID: guestID, Config: map[string]string{"name": vmName, "cores": "2"}, Running: true}); err != nil {
		t.Fatal(err)
	}
	cl, err := pve.New(pve.Config{Endpoint: sim.URL(), TokenID: "root@pam!kubemox", Secret: "s3cret", CAPEM: sim.CAPEM()})
	if err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	kube := fake.NewClientBuilder().WithScheme(s).
		WithStatusSubresource(&v1alpha1.VirtualMachine{}, &v1alpha1.Container{}, &v1alpha1.VirtualMachineSnapshot{}).Build()
	f := &fixture{sim: sim, cl: cl, kube: kube, log: &guesttest.EventLog{}, ref: pve.GuestRef{Type: pve.QEMU, Node: testNode, VMID: guestID}}
	f.storeVM(t, vmName, guestID)
	return f
}

// storeVM stores a VirtualMachine that has observed its guest at vmid.
func (f *fixture) storeVM(t *testing.T, name string, vmid int32) {
	t.Helper()
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	if err := f.kube.Create(context.Background(), vm); err != nil {
		t.Fatal(err)
	}
	vm.Status.Status.ID, vm.Status.Status.Node = vmid, testNode
	if err := f.kube.Status().Update(context.Background(), vm); err != nil {
		t.Fatal(err)
	}
}

// snapshotOf is a stored snapshot resource of the VirtualMachine vm, its
// external name initialised as the initializer does.
func (f *fixture) snapshotOf(t *testing.T, name, vm string, mod ...func(*v1alpha1.VirtualMachineSnapshot)) *v1alpha1.VirtualMachineSnapshot {
	t.Helper()
	cr := &v1alpha1.VirtualMachineSnapshot{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: v1alpha1.VirtualMachineSnapshotSpec{
			VirtualMachineName: vm, Description: "before upgrade",
			ResourceSpec: v1alpha1.ResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}},
		},
	}
	for _, m := range mod {
		m(cr)
	}
	meta.SetExternalName(cr, cr.DesiredSnapshotName())
	if err := f.kube.Create(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	return cr
}

// external resolves cr's target and returns a per-reconcile client, as
// Connect does.
func (f *fixture) external(t *testing.T, cr *v1alpha1.VirtualMachineSnapshot) *external {
	t.Helper()
	tg, err := resolveTarget(context.Background(), f.kube, cr)
	if err != nil {
		t.Fatalf("resolveTarget: %v", err)
	}
	return &external{kube: f.kube, cl: f.cl, record: f.log, target: tg}
}

// take makes snapshot name on the guest through the API and waits for it.
func (f *fixture) take(t *testing.T, name, description string) {
	t.Helper()
	upid, err := f.cl.CreateSnapshot(context.Background(), f.ref, name, pve.SnapshotOptions{Description: description})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, upid)
}

// wait waits for a simulated task to stop (they take milliseconds).
func (f *fixture) wait(t *testing.T, upid string) pve.TaskStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ts, err := f.cl.TaskStatus(context.Background(), upid)
		if err != nil {
			t.Fatal(err)
		}
		if !ts.Running {
			return ts
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still running", upid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// snapshots lists the names on the guest.
func (f *fixture) snapshots(t *testing.T) []string {
	t.Helper()
	snaps, err := f.cl.Snapshots(context.Background(), f.ref)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(snaps))
	for _, s := range snaps {
		out = append(out, s.Name)
	}
	return out
}

// rollbacks counts the qmrollback tasks PVE ran on the guest.
func (f *fixture) rollbacks(t *testing.T) int {
	t.Helper()
	tasks, err := f.cl.GuestTasks(context.Background(), testNode, guestID, 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ts := range tasks {
		if ts.Type == "qmrollback" {
			n++
		}
	}
	return n
}

// waitListed waits until the guest lists snapshot name (PVE lists it from
// its task's start).
func (f *fixture) waitListed(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(f.snapshots(t), name) {
		if time.Now().After(deadline) {
			t.Fatalf("snapshot %s not listed", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
