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

package providertest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/apis"
	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// SimFixture is what one process test works in: a client of the API
// server, its own simulator, a fresh namespace and a ProxmoxConnection to
// the simulator (an API token).
type SimFixture struct {
	Kube       client.Client
	Sim        *pvesim.Server
	Namespace  string
	Connection string
}

// fixtureToken is the simulator token a SimFixture's connection uses.
const (
	fixtureTokenID = "root@pam!kubemox"
	fixtureSecret  = "fixture-secret"
)

// NewSimFixture starts a simulator with opts and makes a namespace and a
// connection to it, both named from prefix; they go when the test ends.
func (e *BinaryEnv) NewSimFixture(t *testing.T, prefix string, opts pvesim.Options) *SimFixture {
	t.Helper()
	e.Env.Require(t)
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(e.Env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	sim, err := pvesim.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	sim.AddToken(fixtureTokenID, fixtureSecret)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := kube.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}, Spec: v1alpha1.ProxmoxConnectionSpec{
		Endpoint: sim.URL(), TokenID: fixtureTokenID, Secret: fixtureSecret, CABundle: string(sim.CAPEM()),
	}}
	if err := kube.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), pc) })
	return &SimFixture{Kube: kube, Sim: sim, Namespace: ns.Name, Connection: pc.Name}
}

// StartProvider starts the provider binary against the env's API server as
// the process tests run it: a 5 s poll, debug logs, no metrics or health
// listeners.
func (e *BinaryEnv) StartProvider(t *testing.T) *Process {
	t.Helper()
	return StartProcess(t, e.Binary, e.Kubeconfig, "--poll=5s", "--metrics-bind-address=0", "--health-probe-bind-address=", "--debug")
}

// WaitFor polls cond until it holds, failing t after timeout with what was
// awaited and the provider's log tail.
func (p *Process) WaitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s\nprovider log tail:\n%s", what, timeout, p.Tail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitReady reads obj (by its name, in the fixture's namespace) until it is
// Ready and Synced, failing t after timeout with obj as last read and p's
// log tail.
func (f *SimFixture) WaitReady(t *testing.T, p *Process, obj interface {
	client.Object
	Conditioned
}, timeout time.Duration) {
	t.Helper()
	key := client.ObjectKey{Namespace: f.Namespace, Name: obj.GetName()}
	deadline := time.Now().Add(timeout)
	for {
		err := f.Kube.Get(context.Background(), key, obj)
		if err == nil && ReadyAndSynced(obj) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not Ready and Synced after %s: err %v, last read %+v\nprovider log tail:\n%s", key, timeout, err, obj, p.Tail())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// KillWhileAnswerHeld is the crash tests' riskiest moment: with PVE's
// answer to the first method request on pattern held back, it starts the
// provider, creates obj, and kills the provider once PVE has applied that
// request; then it lets the answer go, to nobody. It fails t when the
// request does not come within timeout.
func (f *SimFixture) KillWhileAnswerHeld(t *testing.T, e *BinaryEnv, method, pattern string, obj client.Object, timeout time.Duration) {
	t.Helper()
	hold := f.Sim.HoldResponse(method, pattern)
	p := e.StartProvider(t)
	if err := f.Kube.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.Held():
	case <-time.After(timeout):
		t.Fatalf("no %s %s request after %s\nprovider log tail:\n%s", method, pattern, timeout, p.Tail())
	}
	p.Kill(t)
	hold.Release()
}
