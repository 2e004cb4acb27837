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
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/metrics"
	"github.com/kubemox/provider-proxmox/internal/metrics/metricstest"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
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
	o := providertest.Options{
		Provider: provider.Options{PollInterval: 5 * time.Second, EnableManagementPolicies: true},
	}
	os.Exit(providertest.Main(m, "connection", &env, o, func(_ context.Context, ph *providertest.Harness) error {
		h = &harness{Harness: ph}
		return nil
	}, nil))
}

// harness is the provider under test and what the tests drive it with.
type harness struct {
	*providertest.Harness
}

// requireHarness skips t when integration tests are disabled.
func requireHarness(t *testing.T) *harness {
	t.Helper()
	env.Require(t)
	return h
}

// namespace creates a fresh namespace for t's Secrets.
func (hs *harness) namespace(t *testing.T) string {
	t.Helper()
	return hs.Namespace(t, "pxc-")
}

func (hs *harness) createSecret(t *testing.T, ns, name string, data map[string]string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
	if err := hs.Kube.Create(context.Background(), s); err != nil {
		t.Fatalf("create Secret %s/%s: %v", ns, name, err)
	}
	return s
}

func (hs *harness) updateSecret(t *testing.T, ns, name string, data map[string]string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		t.Fatalf("get Secret %s/%s: %v", ns, name, err)
	}
	s.Data = nil
	s.StringData = data
	if err := hs.Kube.Update(context.Background(), s); err != nil {
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
	if err := hs.Kube.Create(context.Background(), pc); err != nil {
		t.Fatalf("create ProxmoxConnection %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := hs.Kube.Delete(context.Background(), pc); err != nil && !kerrors.IsNotFound(err) {
			t.Errorf("delete ProxmoxConnection %s: %v", name, err)
		}
	})
	return pc
}

// waitFor polls the connection until cond holds, failing t after wait.
func (hs *harness) waitFor(t *testing.T, name, what string, cond func(*v1alpha1.ProxmoxConnection) bool) *v1alpha1.ProxmoxConnection {
	t.Helper()
	pc := &v1alpha1.ProxmoxConnection{}
	var err error
	providertest.Eventually(t, wait, 200*time.Millisecond, func() bool {
		err = hs.Kube.Get(context.Background(), types.NamespacedName{Name: name}, pc)
		return err == nil && cond(pc)
	}, func() string {
		return fmt.Sprintf("ProxmoxConnection %s: not %s after %s; last error %v, status %+v", name, what, wait, err, pc.Status)
	})
	return pc
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
	return v1alpha1.ProxmoxConnectionSpec{Endpoint: hs.Sim.URL(), CABundle: string(hs.Sim.CAPEM())}
}

// waitReadyGauge waits for the connection-ready gauge of name, which the
// controller sets once it wrote the Ready condition, to read want.
func (hs *harness) waitReadyGauge(t *testing.T, name string, want float64) {
	t.Helper()
	var (
		got   float64
		found bool
		err   error
	)
	providertest.Eventually(t, wait, 100*time.Millisecond, func() bool {
		var s metricstest.Samples
		s, err = metricstest.Gather(ctrlmetrics.Registry)
		got, found = s.Sum(metrics.ConnectionReady, map[string]string{metrics.LabelConnection: name})
		return err == nil && found && got == want
	}, func() string {
		return fmt.Sprintf("%s{connection=%q} = %v (present %v, gather error %v), want %v", metrics.ConnectionReady, name, got, found, err, want)
	})
}
