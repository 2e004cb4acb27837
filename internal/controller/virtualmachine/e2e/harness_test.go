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

// Package e2e runs the VirtualMachine controller end to end: a real
// kube-apiserver (testenv), the provider's manager in-process, and the PVE
// simulator over HTTPS.
package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	// wait bounds how long the provider may take to react; generous for a
	// busy 2-core machine.
	wait = 90 * time.Second
	// node is the seed sample's node.
	node         = "lowtower"
	templateName = "debian-12"
	templateID   = 9000
	// connName is the seed sample's connection.
	connName = "proxmox-connection-sample"
	tokenID  = "root@pam!kubemox"
	credNS   = "kubemox"
	credName = "proxmox-credentials"
	// poll is the provider's poll interval in these tests: long enough that
	// a re-observation within seconds is not a coincidence.
	poll = 20 * time.Second
)

// currentSecret is the API token secret the connection uses now.
var currentSecret = "first-secret-canary"

// cloudInitPassword is the password a test puts in a Secret.
const cloudInitPassword = "hunter2-ci-canary"

// leakCanaries must never appear in the provider's logs.
var leakCanaries = []string{"first-secret-canary", cloudInitPassword}

var (
	env *testenv.Env
	h   *harness
)

func TestMain(m *testing.M) {
	o := providertest.Options{
		Provider: provider.Options{PollInterval: poll, MaxReconcileRate: 10, EnableManagementPolicies: true},
		Sim:      pvesim.Options{Nodes: []string{node, "othernode"}, LogRequests: true},
	}
	os.Exit(providertest.Main(m, "virtualmachine e2e", &env, o, setup, func(_ *providertest.Harness, code int) int {
		if code == 0 {
			code = h.checkNoSecretLeaks()
		}
		return code
	}))
}

// harness is the provider under test, its API server and its simulator.
type harness struct {
	*providertest.Harness
}

// setup seeds the simulator with the token and the template, and creates
// the seed's connection.
func setup(ctx context.Context, p *providertest.Harness) error {
	hs := &harness{Harness: p}
	hs.Sim.AddToken(tokenID, currentSecret)
	if err := hs.Sim.AddTemplate(node, templateID, templateName); err != nil {
		return err
	}
	if err := hs.setupConnection(ctx); err != nil {
		return err
	}
	h = hs
	return nil
}

// checkNoSecretLeaks fails the run when the provider logged a secret at
// debug level. (providertest.Main fails it when the provider listed or
// watched Secrets with their data, the cloud-init passwordFrom reads and the
// connection-details Secrets included.)
func (hs *harness) checkNoSecretLeaks() int {
	code := 0
	logs := hs.Logs.String()
	for _, secret := range leakCanaries {
		if strings.Contains(logs, secret) {
			fmt.Fprintf(os.Stderr, "FAIL: the provider logged a secret (%d bytes of logs searched)\n", len(logs))
			code = 1
		}
	}
	return code
}

// setupConnection creates the seed's connection (a token whose secret lives
// in a Secret) with the simulator's CA trusted, and waits for it.
func (hs *harness) setupConnection(ctx context.Context) error {
	if err := hs.CreateTokenConnection(ctx, connName, tokenID, credNS, credName, currentSecret); err != nil {
		return err
	}
	return hs.WaitConnectionReady(ctx, connName, wait)
}

func require(t *testing.T) *harness {
	t.Helper()
	env.Require(t)
	return h
}

// namespace makes a namespace for one test's resources.
func (hs *harness) namespace(t *testing.T) string {
	t.Helper()
	return hs.Namespace(t, "vm-")
}

// cloneSpec is a VirtualMachine cloning the simulator's template.
func cloneSpec(name string) v1alpha1.VirtualMachineSpec {
	return v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		Name:         name, NodeName: node,
		Template: &v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{
			Cores: 2, Socket: 1, Memory: 2048,
			Disk:    []v1alpha1.VirtualMachineDisk{{Storage: "local-lvm", Size: 16, Device: "scsi0"}},
			Network: []v1alpha1.VirtualMachineNetwork{{Model: "virtio", Bridge: "vmbr0"}},
		}},
	}
}

func (hs *harness) create(t *testing.T, vm *v1alpha1.VirtualMachine) *v1alpha1.VirtualMachine {
	t.Helper()
	if err := hs.Kube.Create(context.Background(), vm); err != nil {
		t.Fatalf("create VirtualMachine %s/%s: %v", vm.Namespace, vm.Name, err)
	}
	return vm
}

// waitVM polls a VirtualMachine until cond holds.
func (hs *harness) waitVM(t *testing.T, ns, name, what string, cond func(*v1alpha1.VirtualMachine) bool) *v1alpha1.VirtualMachine {
	t.Helper()
	vm := &v1alpha1.VirtualMachine{}
	var err error
	providertest.Eventually(t, wait, 250*time.Millisecond, func() bool {
		err = hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, vm)
		return err == nil && cond(vm)
	}, func() string {
		return fmt.Sprintf("VirtualMachine %s/%s: not %s after %s; last error %v; annotations %v; status %+v", ns, name, what, wait, err, vm.Annotations, vm.Status)
	})
	return vm
}

func ready(vm *v1alpha1.VirtualMachine) bool { return providertest.ReadyAndSynced(vm) }

func (hs *harness) waitReady(t *testing.T, ns, name string) *v1alpha1.VirtualMachine {
	t.Helper()
	return hs.waitVM(t, ns, name, "Ready and Synced", ready)
}

func (hs *harness) waitGone(t *testing.T, ns, name string) {
	t.Helper()
	hs.WaitGone(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, wait)
}

func (hs *harness) delete(t *testing.T, vm *v1alpha1.VirtualMachine) {
	t.Helper()
	if err := hs.Kube.Delete(context.Background(), vm); err != nil && !kerrors.IsNotFound(err) {
		t.Fatalf("delete %s/%s: %v", vm.Namespace, vm.Name, err)
	}
}
