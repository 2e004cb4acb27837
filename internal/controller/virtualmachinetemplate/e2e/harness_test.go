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

// Package e2e runs the VirtualMachineTemplate controller end to end (with
// the StorageDownloadURL controller it relies on): a real kube-apiserver
// (testenv), the provider's manager in-process, and the PVE simulator over
// HTTPS.
package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
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
	credNS   = "kubemox"
	credName = "proxmox-credentials"
	secret   = "vmt-token-secret"
	// rootConnName logs in as root@pam with its password, the one
	// credential that may import a disk from a file path.
	rootConnName = "root-password-connection"
	rootPassword = "vmt-root-password"
	// noImport is a storage configured without import content (as before
	// PVE 8.2).
	noImport = "nas"
)

var (
	env *testenv.Env
	h   *providertest.Harness
)

func TestMain(m *testing.M) {
	o := providertest.Options{
		Provider: provider.Options{PollInterval: 20 * time.Second, MaxReconcileRate: 10, EnableManagementPolicies: true},
		Sim: pvesim.Options{Nodes: []string{node}, SharedStorage: noImport, TaskDurations: map[string]time.Duration{
			"download": 300 * time.Millisecond, "qmcreate": 300 * time.Millisecond, "qmtemplate": 200 * time.Millisecond,
		}},
	}
	os.Exit(providertest.Main(m, "virtualmachinetemplate e2e", &env, o, setup, nil))
}

func setup(ctx context.Context, p *providertest.Harness) error {
	p.Sim.AddToken(tokenID, secret)
	if err := p.CreateTokenConnection(ctx, connName, tokenID, credNS, credName, secret); err != nil {
		return err
	}
	if err := p.Sim.SetStorageContent(noImport, "images", "iso", "vztmpl", "backup"); err != nil {
		return err
	}
	if err := createRootConnection(ctx, p); err != nil {
		return err
	}
	h = p
	if err := p.WaitConnectionReady(ctx, rootConnName, wait); err != nil {
		return err
	}
	return p.WaitConnectionReady(ctx, connName, wait)
}

// createRootConnection creates rootConnName, logging in as root@pam with
// the password from a Secret.
func createRootConnection(ctx context.Context, p *providertest.Harness) error {
	p.Sim.AddUser("root@pam", rootPassword)
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: credNS, Name: "root-password"}, StringData: map[string]string{"password": rootPassword}},
		&v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: rootConnName}, Spec: v1alpha1.ProxmoxConnectionSpec{
			Endpoint: p.Sim.URL(), Username: "root@pam", CABundle: string(p.Sim.CAPEM()),
			PasswordFrom: &v1alpha1.SecretKeySelector{Name: "root-password", Namespace: credNS, Key: "password"},
		}},
	} {
		if err := p.Kube.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

func require(t *testing.T) *providertest.Harness {
	t.Helper()
	env.Require(t)
	return h
}

// template builds a template named after the test's namespace from a
// cloud image of that name, so runs and tests never share a file or a
// name.
func template(ns string) *v1alpha1.VirtualMachineTemplate {
	cr := &v1alpha1.VirtualMachineTemplate{}
	cr.SetNamespace(ns)
	cr.SetName("tmpl")
	cr.Spec.ConnectionRef = &v1alpha1.ConnectionReference{Name: connName}
	cr.Spec.Name = ns
	cr.Spec.NodeName = node
	cr.Spec.ImageConfig = v1alpha1.DownloadParameters{
		Content: "import", Filename: ns + ".qcow2", Node: node, Storage: "local", URL: "https://cloud.example/" + ns + ".qcow2",
	}
	cr.Spec.CloudInitConfig = &v1alpha1.CloudInitConfig{User: "debian", SSHKeys: []string{"ssh-ed25519 AAAAC3Nza test@example"}}
	return cr
}

func create(t *testing.T, cr client.Object) {
	t.Helper()
	if err := h.Kube.Create(context.Background(), cr); err != nil {
		t.Fatalf("create %s: %v", cr.GetName(), err)
	}
}

func remove(t *testing.T, cr client.Object) {
	t.Helper()
	if err := h.Kube.Delete(context.Background(), cr); err != nil && !kerrors.IsNotFound(err) {
		t.Fatalf("delete %s: %v", cr.GetName(), err)
	}
}

// guestNamed returns the simulator's guest with that name.
func guestNamed(name string) (pvesim.GuestView, bool) {
	for _, g := range h.Sim.Guests() {
		if g.Config["name"] == name {
			return g, true
		}
	}
	return pvesim.GuestView{}, false
}
