// Package e2e runs the VirtualMachineSnapshot and VirtualMachineSnapshotPolicy
// controllers end to end: a real kube-apiserver (testenv), the provider's
// manager in-process, and the PVE simulator over HTTPS.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	wait     = 90 * time.Second
	node     = "lowtower"
	connName = "proxmox-connection-sample"
	tokenID  = "root@pam!kubemox"
	secret   = "snapshot-e2e-secret"
	// unmanagedVMID is the guest the unmanaged example snapshots.
	unmanagedVMID = 4242
)

var (
	env *testenv.Env
	h   *providertest.Harness
	cl  *pve.Client
)

func TestMain(m *testing.M) {
	o := providertest.Options{
		Provider: provider.Options{PollInterval: 20 * time.Second, MaxReconcileRate: 10, EnableManagementPolicies: true},
		Sim:      pvesim.Options{Nodes: []string{node}},
	}
	os.Exit(providertest.Main(m, "virtualmachinesnapshot e2e", &env, o, setup, nil))
}

// setup seeds the token and a guest the provider does not manage, creates
// the examples' connection and waits for it.
func setup(ctx context.Context, p *providertest.Harness) error {
	p.Sim.AddToken(tokenID, secret)
	if err := p.Sim.AddGuest(pvesim.GuestSeed{Node: node, VMID: unmanagedVMID, Config: map[string]string{"name": "legacy"}}); err != nil {
		return err
	}
	if err := p.CreateTokenConnection(ctx, connName, tokenID, "kubemox", "proxmox-credentials", secret); err != nil {
		return err
	}
	c, err := pve.New(pve.Config{Endpoint: p.Sim.URL(), TokenID: tokenID, Secret: secret, CAPEM: p.Sim.CAPEM()})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		pc := &v1alpha1.ProxmoxConnection{}
		if err := p.Kube.Get(ctx, types.NamespacedName{Name: connName}, pc); err == nil &&
			pc.Status.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
			h, cl = p, c
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("ProxmoxConnection %s not Ready after %s", connName, wait)
}

func require(t *testing.T) *providertest.Harness {
	t.Helper()
	env.Require(t)
	return h
}

// applyExample creates the object of examples/<dir>/<file> (in ns when not
// empty) and returns it.
func applyExample(t *testing.T, ns, dir, file string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", dir, file))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &u.Object); err != nil {
		t.Fatal(err)
	}
	if ns != "" {
		u.SetNamespace(ns)
	}
	if err := h.Kube.Create(context.Background(), u); err != nil {
		t.Fatalf("apply %s/%s: %v", dir, file, err)
	}
	return u
}

func isReady(c xpv2.Condition) bool { return c.Status == corev1.ConditionTrue }

// waitSnapshot reads a VirtualMachineSnapshot until cond holds.
func waitSnapshot(t *testing.T, ns, name, what string, cond func(*v1alpha1.VirtualMachineSnapshot) bool) *v1alpha1.VirtualMachineSnapshot {
	t.Helper()
	s := &v1alpha1.VirtualMachineSnapshot{}
	s.Namespace, s.Name = ns, name
	h.WaitFor(t, s, what, wait, func() bool { return cond(s) })
	return s
}

func waitVMReady(t *testing.T, ns, name string) *v1alpha1.VirtualMachine {
	t.Helper()
	vm := &v1alpha1.VirtualMachine{}
	vm.Namespace, vm.Name = ns, name
	h.WaitFor(t, vm, "Ready", wait, func() bool { return isReady(vm.GetCondition(xpv2.TypeReady)) })
	return vm
}

// snapshotsOf lists the snapshots PVE has of a guest.
func snapshotsOf(t *testing.T, vmid int) map[string]pve.Snapshot {
	t.Helper()
	g, ok := h.Sim.Guest(vmid)
	if !ok {
		return nil
	}
	snaps, err := cl.Snapshots(context.Background(), pve.GuestRef{Type: pve.QEMU, Node: g.Node, VMID: vmid})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pve.Snapshot{}
	for _, s := range snaps {
		out[s.Name] = s
	}
	return out
}

// rollbacksOf counts the rollback tasks PVE ran on a guest.
func rollbacksOf(t *testing.T, vmid int) int {
	t.Helper()
	tasks, err := cl.GuestTasks(context.Background(), node, vmid, 500)
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
