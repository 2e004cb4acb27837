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

// Package e2e runs placement end to end: a real kube-apiserver (testenv),
// the provider's manager in-process, and a simulated cluster of four nodes
// with different free memory, one of them offline.
package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	// wait bounds how long the provider may take to react on a busy
	// 2-core machine.
	wait = 90 * time.Second
	poll = 5 * time.Second

	connName = "placement"
	tokenID  = "root@pam!placement"
	secret   = "placement-token-secret"
	credNS   = "kubemox"
	credName = "placement-credentials"

	// sharedStorage is enabled on every node, shared.
	sharedStorage = "shared"
	// vmTemplate is on pve1, its disks on the shared storage; localTemplate
	// is on pve1 with its disk on local-lvm; ctTemplate is a container
	// template on pve1 on local-lvm.
	vmTemplate    = "debian-12"
	localTemplate = "local-only"
	ctTemplate    = "debian-12-ct"
)

// The nodes: pve2 has the most free memory (50 GiB), then pve1 (40), pve4
// (20); pve3 has the most RAM of all but is offline.
var memory = map[string]pvesim.NodeMemory{
	"pve1": {Total: 64 << 30, Used: 24 << 30},
	"pve2": {Total: 64 << 30, Used: 14 << 30},
	"pve3": {Total: 256 << 30, Used: 8 << 30},
	"pve4": {Total: 32 << 30, Used: 12 << 30},
}

var allNodes = []string{"pve1", "pve2", "pve3", "pve4"}

var (
	env *testenv.Env
	h   *providertest.Harness
)

func TestMain(m *testing.M) {
	o := providertest.Options{
		Provider: provider.Options{PollInterval: poll, MaxReconcileRate: 10, EnableManagementPolicies: true},
		Sim:      pvesim.Options{Nodes: allNodes, SharedStorage: sharedStorage, NodeMemory: memory},
	}
	os.Exit(providertest.Main(m, "placement e2e", &env, o, setup, nil))
}

// setup seeds the token and the templates, takes pve3 offline and creates
// the connection.
func setup(ctx context.Context, p *providertest.Harness) error {
	p.Sim.AddToken(tokenID, secret)
	if err := p.Sim.AddTemplate("pve1", 9000, vmTemplate); err != nil {
		return err
	}
	seeds := []pvesim.GuestSeed{
		{Kind: pvesim.KindQemu, Node: "pve1", VMID: 9001, Template: true, Config: map[string]string{
			"name": localTemplate, "memory": "1024", "cores": "1", "scsi0": "local-lvm:8", "net0": "virtio,bridge=vmbr0", "ostype": "l26"}},
		{Kind: pvesim.KindLXC, Node: "pve1", VMID: 9100, Template: true, Config: map[string]string{
			"hostname": ctTemplate, "rootfs": "local-lvm:4", "memory": "512", "cores": "1",
			"net0": "name=eth0,bridge=vmbr0,ip=dhcp,type=veth", "ostype": "debian", "unprivileged": "1"}},
	}
	for _, s := range seeds {
		if err := p.Sim.AddGuest(s); err != nil {
			return err
		}
	}
	if err := p.Sim.SetNodeOffline("pve3", true, ""); err != nil {
		return err
	}
	if err := p.CreateTokenConnection(ctx, connName, tokenID, credNS, credName, secret); err != nil {
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

// waitFor polls obj until cond holds (providertest's WaitFor, with the
// object handed to cond), and returns it.
func waitFor[T client.Object](t *testing.T, obj T, what string, cond func(T) bool) T {
	t.Helper()
	h.WaitFor(t, obj, what, wait, func() bool { return cond(obj) })
	return obj
}

// guestNode is the node the simulator has the guest of vmid on.
func guestNode(t *testing.T, vmid int) string {
	t.Helper()
	return guesttest.Guest(t, h.Sim, vmid).Node
}
