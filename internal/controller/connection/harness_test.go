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

package connection_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

// wait is the deadline for the provider to react; generous for a busy
// 2-core CI machine.
const wait = 60 * time.Second

// The package shares one API server, one simulator and one provider.
var (
	env *testenv.Env
	h   *harness
)

// TestMain runs the provider in-process against one API server for all
// tests, and checks at the very end that no full Secret list or watch ever
// reached the API server during the whole run.
func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv(testenv.SkipEnvVar) == "1" {
		fmt.Fprintln(os.Stderr, "connection: integration tests disabled by", testenv.SkipEnvVar)
		return m.Run()
	}
	started, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	env = started
	defer func() { _ = env.Stop() }()

	ctx, cancel := context.WithCancel(context.Background())
	h, err = startHarness(ctx, env.Config)
	if err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	code := m.Run()
	if bad := h.Requests.FullSecretListsOrWatches(); len(bad) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: full Secret lists or watches reached the API server: %v\n", bad)
		code = 1
	}
	cancel()
	h.stop()
	return code
}

// harness is the provider under test and what the tests drive it with.
type harness struct {
	*providertest.Harness
	kube client.Client
	p    *provider.Provider
	sim  *pvesim.Server
}

func startHarness(ctx context.Context, cfg *rest.Config) (*harness, error) {
	ph, err := providertest.Start(ctx, cfg, providertest.Options{
		Provider: provider.Options{PollInterval: 5 * time.Second, EnableManagementPolicies: true},
	})
	if err != nil {
		return nil, err
	}
	return &harness{Harness: ph, kube: ph.Kube, p: ph.Provider, sim: ph.Sim}, nil
}

func (hs *harness) stop() { hs.Stop() }

// requireHarness skips t when integration tests are disabled.
func requireHarness(t *testing.T) *harness {
	t.Helper()
	env.Require(t)
	return h
}

// namespace creates a fresh namespace for t's Secrets. envtest runs no
// namespace controller, so it is left behind.
func (hs *harness) namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pxc-"}}
	if err := hs.kube.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

func (hs *harness) createSecret(t *testing.T, ns, name string, data map[string]string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
	if err := hs.kube.Create(context.Background(), s); err != nil {
		t.Fatalf("create Secret %s/%s: %v", ns, name, err)
	}
	return s
}

func (hs *harness) updateSecret(t *testing.T, ns, name string, data map[string]string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := hs.kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		t.Fatalf("get Secret %s/%s: %v", ns, name, err)
	}
	s.Data = nil
	s.StringData = data
	if err := hs.kube.Update(context.Background(), s); err != nil {
		t.Fatalf("update Secret %s/%s: %v", ns, name, err)
	}
	return s
}

// createConnection creates a ProxmoxConnection named after t and deletes it
// when t ends.
func (hs *harness) createConnection(t *testing.T, spec v1alpha1.ProxmoxConnectionSpec) *v1alpha1.ProxmoxConnection {
	t.Helper()
	name := strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(t.Name(), "-"))
	name = strings.Trim(name, "-")
	if len(name) > 60 {
		name = name[len(name)-60:]
	}
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if err := hs.kube.Create(context.Background(), pc); err != nil {
		t.Fatalf("create ProxmoxConnection %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := hs.kube.Delete(context.Background(), pc); err != nil && !kerrors.IsNotFound(err) {
			t.Errorf("delete ProxmoxConnection %s: %v", name, err)
		}
	})
	return pc
}

// waitFor polls the connection until cond holds, failing t after wait.
func (hs *harness) waitFor(t *testing.T, name, what string, cond func(*v1alpha1.ProxmoxConnection) bool) *v1alpha1.ProxmoxConnection {
	t.Helper()
	deadline := time.Now().Add(wait)
	pc := &v1alpha1.ProxmoxConnection{}
	for {
		err := hs.kube.Get(context.Background(), types.NamespacedName{Name: name}, pc)
		if err == nil && cond(pc) {
			return pc
		}
		if time.Now().After(deadline) {
			t.Fatalf("ProxmoxConnection %s: not %s after %s; last error %v, status %+v", name, what, wait, err, pc.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitReady waits for the Ready condition to have status and reason, on the
// connection's current generation.
func (hs *harness) waitReady(t *testing.T, name string, status corev1.ConditionStatus, reason xpv2.ConditionReason) *v1alpha1.ProxmoxConnection {
	t.Helper()
	return hs.waitFor(t, name, fmt.Sprintf("Ready=%s/%s", status, reason), func(pc *v1alpha1.ProxmoxConnection) bool {
		c := pc.Status.GetCondition(xpv2.TypeReady)
		return c.Status == status && c.Reason == reason && c.ObservedGeneration == pc.Generation
	})
}

// simSpec is a connection to the shared simulator with its CA trusted.
func (hs *harness) simSpec() v1alpha1.ProxmoxConnectionSpec {
	return v1alpha1.ProxmoxConnectionSpec{Endpoint: hs.sim.URL(), CABundle: string(hs.sim.CAPEM())}
}
