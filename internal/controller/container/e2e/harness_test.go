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

// Package e2e runs the Container controller end to end: a real
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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	// wait bounds how long the provider may take to react on a busy
	// 2-core machine.
	wait = 90 * time.Second
	// node is the examples' node.
	node = "lowtower"
	// templateName is the container template the clone example names.
	templateName = "debian-12-ct"
	templateID   = 9100
	archive      = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
	// connName is the examples' connection.
	connName = "proxmox-connection-sample"
	tokenID  = "root@pam!kubemox"
	credNS   = "kubemox"
	credName = "proxmox-credentials"
	// poll is the provider's poll interval: drift is corrected within it.
	poll = 5 * time.Second
	// rootPassword is a canary that must never reach the provider's logs.
	rootPassword = "root-pw-canary-42"
)

var (
	env *testenv.Env
	h   *providertest.Harness
)

func TestMain(m *testing.M) {
	o := providertest.Options{
		Provider: provider.Options{PollInterval: poll, MaxReconcileRate: 10, EnableManagementPolicies: true},
		Sim:      pvesim.Options{Nodes: []string{node, "othernode"}, LogRequests: true},
	}
	os.Exit(providertest.Main(m, "container e2e", &env, o, setup, func(p *providertest.Harness, code int) int {
		if code == 0 && strings.Contains(p.Logs.String(), rootPassword) {
			fmt.Fprintln(os.Stderr, "FAIL: the provider logged root's password")
			code = 1
		}
		return code
	}))
}

// setup seeds the token, the template archive and the container template,
// and creates the examples' connection.
func setup(ctx context.Context, p *providertest.Harness) error {
	p.Sim.AddToken(tokenID, "ct-token-secret")
	if err := p.Sim.AddVolume(node, archive); err != nil {
		return err
	}
	if err := p.Sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: node, VMID: templateID, Template: true, Config: map[string]string{
		"hostname": templateName, "rootfs": "local-lvm:4", "memory": "512", "cores": "1",
		"net0": "name=eth0,bridge=vmbr0,ip=dhcp,type=veth", "ostype": "debian", "unprivileged": "1",
	}}); err != nil {
		return err
	}
	if err := p.CreateTokenConnection(ctx, connName, tokenID, credNS, credName, "ct-token-secret"); err != nil {
		return err
	}
	h = p
	return p.WaitConnectionReady(ctx, connName, wait)
}

func require(t *testing.T) *providertest.Harness {
	t.Helper()
	env.Require(t)
	return h
}

// newContainer is a Container in ns cloning nothing yet: callers set the
// source.
func newContainer(ns, name string, src func(*v1alpha1.ContainerTemplate)) *v1alpha1.Container {
	tpl := v1alpha1.ContainerTemplate{
		Cores: 2, Memory: 1024,
		Disk:    []v1alpha1.ContainerDisk{{Storage: "local-lvm", Size: 8}},
		Network: []v1alpha1.ContainerNetwork{{Bridge: "vmbr0", IP: "dhcp"}},
	}
	src(&tpl)
	return &v1alpha1.Container{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ContainerSpec{
			ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
			Name:         name, NodeName: node, Template: &tpl,
		},
	}
}

func create(t *testing.T, p *providertest.Harness, cr *v1alpha1.Container) {
	t.Helper()
	if err := p.Kube.Create(context.Background(), cr); err != nil {
		t.Fatalf("create Container %s/%s: %v", cr.Namespace, cr.Name, err)
	}
}

// waitContainer polls a Container until cond holds.
func waitContainer(t *testing.T, p *providertest.Harness, ns, name, what string, cond func(*v1alpha1.Container) bool) *v1alpha1.Container {
	t.Helper()
	cr := &v1alpha1.Container{}
	var err error
	providertest.Eventually(t, wait, 250*time.Millisecond, func() bool {
		err = p.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, cr)
		return err == nil && cond(cr)
	}, func() string {
		return fmt.Sprintf("Container %s/%s: not %s after %s; last error %v; annotations %v; status %+v", ns, name, what, wait, err, cr.Annotations, cr.Status)
	})
	return cr
}

func ready(cr *v1alpha1.Container) bool { return providertest.ReadyAndSynced(cr) }

func waitReady(t *testing.T, p *providertest.Harness, ns, name string) *v1alpha1.Container {
	t.Helper()
	return waitContainer(t, p, ns, name, "Ready and Synced", ready)
}
