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

// Package adoptione2e runs a management cluster's rebuild end to end: two
// API servers (two management clusters), the provider binary against each,
// and one Proxmox VE simulator both point at.
package adoptione2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	wait       = 120 * time.Second
	node       = "pve"
	vmTemplate = "debian-12"
	ctTemplate = "debian-12-ct"
	tokenID    = "root@pam!kubemox"
	secret     = "adoption-token-secret"
	connName   = "pve"
)

// cluster is one management cluster: its API server, a client, a kubeconfig
// for the provider binary, and its identity (the kube-system UID).
type cluster struct {
	env        *testenv.Env
	kube       client.Client
	kubeconfig string
	id         string
}

var (
	binary string
	sim    *pvesim.Server
	first  *cluster
	second *cluster
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if os.Getenv(testenv.SkipEnvVar) == "1" {
		fmt.Fprintln(os.Stderr, "adoption e2e: integration tests disabled by", testenv.SkipEnvVar)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "adoption-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if binary, err = providertest.BuildProvider(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if sim, err = pvesim.Start(pvesim.Options{Nodes: []string{node}, LogRequests: true}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer sim.Close()
	if err := seed(sim); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if first, err = startCluster(filepath.Join(dir, "kubeconfig-first")); err != nil {
		fmt.Fprintln(os.Stderr, "first cluster:", err)
		return 1
	}
	defer func() { _ = first.env.Stop() }()
	if second, err = startCluster(filepath.Join(dir, "kubeconfig-second")); err != nil {
		fmt.Fprintln(os.Stderr, "second cluster:", err)
		return 1
	}
	defer func() { _ = second.env.Stop() }()
	return m.Run()
}

// seed gives the simulator the token both clusters use and the templates
// VMs and containers clone.
func seed(s *pvesim.Server) error {
	s.AddToken(tokenID, secret)
	if err := s.AddTemplate(node, 9000, vmTemplate); err != nil {
		return err
	}
	return s.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: node, VMID: 9100, Template: true, Config: map[string]string{
		"hostname": ctTemplate, "rootfs": "local-lvm:4", "memory": "512", "cores": "1",
		"net0": "name=eth0,bridge=vmbr0,ip=dhcp,type=veth", "ostype": "debian", "unprivileged": "1",
	}})
}

// startCluster starts an API server with the provider's CRDs, and creates
// its connection to the simulator.
func startCluster(kubeconfig string) (*cluster, error) {
	env, err := testenv.Start()
	if err != nil {
		return nil, err
	}
	kube, err := providertest.NewClient(env.Config)
	if err != nil {
		return nil, err
	}
	if err := providertest.WriteKubeconfig(env.Config, kubeconfig); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{}
	if err := kube.Get(context.Background(), types.NamespacedName{Name: "kube-system"}, ns); err != nil {
		return nil, err
	}
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: connName}, Spec: v1alpha1.ProxmoxConnectionSpec{
		Endpoint: sim.URL(), TokenID: tokenID, Secret: secret, CABundle: string(sim.CAPEM()),
	}}
	if err := kube.Create(context.Background(), pc); err != nil {
		return nil, err
	}
	return &cluster{env: env, kube: kube, kubeconfig: kubeconfig, id: string(ns.UID)}, nil
}

// start runs the provider binary against c; it is killed when t ends.
// require skips the test when TestMain started no clusters
// (SKIP_INTEGRATION=1).
func (c *cluster) require(t *testing.T) {
	t.Helper()
	if c == nil {
		var none *testenv.Env
		none.Require(t)
	}
}

func (c *cluster) start(t *testing.T) *providertest.Process {
	t.Helper()
	return providertest.StartProcess(t, binary, c.kubeconfig, "--poll=5s", "--metrics-bind-address=0", "--health-probe-bind-address=", "--debug")
}
