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
