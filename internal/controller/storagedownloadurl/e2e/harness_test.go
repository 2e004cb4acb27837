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

// Package e2e runs the StorageDownloadURL controller end to end: a real
// kube-apiserver (testenv), the provider's manager in-process, and the PVE
// simulator over HTTPS.
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	// wait bounds how long the provider may take to react on a busy
	// machine.
	wait = 90 * time.Second
	node = "lowtower"
	// connName is the connection the examples name.
	connName = "proxmox-connection-sample"
	tokenID  = "root@pam!kubemox"
	credNS   = "kubemox"
	credName = "proxmox-credentials"
	secret   = "sdu-token-secret"
	poll     = 20 * time.Second
)

var (
	env *testenv.Env
	h   *providertest.Harness
)

func TestMain(m *testing.M) {
	o := providertest.Options{
		Provider: provider.Options{PollInterval: poll, MaxReconcileRate: 10, EnableManagementPolicies: true},
		// Downloads take a moment, so they are seen running.
		Sim: pvesim.Options{Nodes: []string{node}, TaskDurations: map[string]time.Duration{"download": 300 * time.Millisecond}},
	}
	os.Exit(providertest.Main(m, "storagedownloadurl e2e", &env, o, setup, nil))
}

func setup(ctx context.Context, p *providertest.Harness) error {
	p.Sim.AddToken(tokenID, secret)
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

// download is an ISO download named after the test's namespace, so runs
// and tests never share a file.
func download(ns string) *v1alpha1.StorageDownloadURL {
	cr := &v1alpha1.StorageDownloadURL{}
	cr.SetNamespace(ns)
	cr.SetName("iso")
	cr.Spec.ConnectionRef = &v1alpha1.ConnectionReference{Name: connName}
	cr.Spec.DownloadParameters = v1alpha1.DownloadParameters{
		Content: "iso", Filename: ns + ".iso", Node: node, Storage: "local", URL: "https://cdimage.example/" + ns + ".iso",
	}
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
	h.WaitGone(t, cr, wait)
}

func ready(cr *v1alpha1.StorageDownloadURL) bool {
	return cr.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue &&
		cr.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue
}

func waitReady(t *testing.T, cr *v1alpha1.StorageDownloadURL) {
	t.Helper()
	h.WaitFor(t, cr, "Ready and Synced", wait, func() bool { return ready(cr) })
}

// waitEvent waits for an event of reason about the object named name in ns.
func waitEvent(t *testing.T, ns, name, reason string) corev1.Event {
	t.Helper()
	var found corev1.Event
	providertest.Eventually(t, wait, 250*time.Millisecond, func() bool {
		l := &corev1.EventList{}
		if err := h.Kube.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			return false
		}
		for _, e := range l.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason {
				found = e
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("no %s event for %s/%s after %s", reason, ns, name, wait) })
	return found
}
