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

// Package startuptest runs the provider binary against an API server that
// serves none of its kinds, then installs the CRDs one at a time in an
// unhelpful order, as Crossplane's safe-start does when it activates
// ManagedResourceDefinitions: the provider must stay up and healthy, and
// start each controller when its kinds are served, without a restart.
package startuptest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	wait = 120 * time.Second
	// crdPause is how long the provider runs with only some kinds served
	// before the next CRD arrives.
	crdPause = 3 * time.Second

	node     = "lowtower"
	template = "debian-12"
	tokenID  = "root@pam!kubemox"
)

// pe is the API server and provider binary of this package.
var pe providertest.BinaryEnv

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

// runMain starts the API server with an empty CRD directory: it serves none
// of our kinds.
func runMain(m *testing.M) int {
	noCRDs, err := os.MkdirTemp("", "no-crds-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(noCRDs) }()
	return providertest.BinaryMain(m, &pe, noCRDs)
}

func TestStartsWithoutCRDsAndPicksUpEachKindAsItIsServed(t *testing.T) {
	pe.Env.Require(t)
	ctx := context.Background()
	kube, err := providertest.NewClient(pe.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := packageCRDs(t)

	sim, err := pvesim.Start(pvesim.Options{Nodes: []string{node}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	sim.AddToken(tokenID, "startup-secret")
	if err := sim.AddTemplate(node, 9000, template); err != nil {
		t.Fatal(err)
	}

	probes := freeAddress(t)
	p := providertest.StartProcess(t, pe.Binary, pe.Kubeconfig, "--poll=5s", "--metrics-bind-address=0",
		"--health-probe-bind-address="+probes, "--debug")
	h := &health{t: t, p: p, base: "http://" + probes}

	h.eventuallyOK("/healthz")
	h.eventuallyOK("/readyz")
	h.staysOK(crdPause, "with no CRD installed")

	// The managed kind first: its controller starts, while the connection
	// controller still waits for ProxmoxConnection and ProviderConfigUsage.
	installCRD(ctx, t, kube, crds, v1alpha1.VirtualMachineKind)
	h.staysOK(crdPause, "with only VirtualMachine served")

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "startup-"}}
	if err := kube.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// A VM created before its connection's kind is served.
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "early"}, Spec: v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: "startup"}},
		Name:         "early", NodeName: node,
		Template: &v1alpha1.VirtualMachineCloneSpec{Name: template, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 2, Memory: 2048}},
	}}
	if err := kube.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	h.staysOK(crdPause, "with a VirtualMachine whose connection kind is not served")

	installCRD(ctx, t, kube, crds, v1alpha1.ProxmoxConnectionKind)
	h.staysOK(crdPause, "with ProxmoxConnection served but not ProviderConfigUsage")

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "proxmox-token"}, StringData: map[string]string{"token": "startup-secret"}}
	if err := kube.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: "startup"}, Spec: v1alpha1.ProxmoxConnectionSpec{
		Endpoint: sim.URL(), TokenID: tokenID, CABundle: string(sim.CAPEM()),
		SecretFrom: &v1alpha1.SecretKeySelector{Name: secret.Name, Namespace: ns.Name, Key: "token"},
	}}
	if err := kube.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), pc) })

	installCRD(ctx, t, kube, crds, v1alpha1.ProviderConfigUsageKind)

	h.eventually("the ProxmoxConnection to become Ready", func() bool {
		got := &v1alpha1.ProxmoxConnection{}
		return kube.Get(ctx, types.NamespacedName{Name: pc.Name}, got) == nil &&
			got.Status.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
	})
	h.eventually("the VirtualMachine to become Ready", func() bool {
		got := &v1alpha1.VirtualMachine{}
		return kube.Get(ctx, client.ObjectKeyFromObject(vm), got) == nil &&
			got.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
	})
	if n := len(sim.Guests()); n != 2 {
		t.Errorf("guests in the simulator = %d, want the template and one VM", n)
	}
	h.ok("/readyz")
	if strings.Contains(p.Logs(), "Cannot set up controller") {
		t.Errorf("a controller setup failed:\n%s", p.Tail())
	}

	// Objects go before their CRDs (the test's cleanup), while the provider
	// still runs to release their finalizers. envtest runs no garbage
	// collector, so the VM's ProviderConfigUsage, which it owns, is deleted
	// here as the collector would.
	deleteAndWait(ctx, t, h, kube, vm)
	if err := kube.DeleteAllOf(ctx, &v1alpha1.ProviderConfigUsage{}, client.InNamespace(ns.Name)); err != nil {
		t.Fatal(err)
	}
	deleteAndWait(ctx, t, h, kube, pc)
	if n := len(sim.Guests()); n != 1 {
		t.Errorf("guests in the simulator after the VM's deletion = %d, want the template only", n)
	}
}

func deleteAndWait(ctx context.Context, t *testing.T, h *health, kube client.Client, o client.Object) {
	t.Helper()
	if err := kube.Delete(ctx, o); err != nil {
		t.Fatal(err)
	}
	h.eventually(fmt.Sprintf("%T %s to be deleted", o, o.GetName()), func() bool {
		return kerrors.IsNotFound(kube.Get(ctx, client.ObjectKeyFromObject(o), o))
	})
}

// health probes the provider's health endpoints, failing the test, with
// the provider's log tail, when the process has exited.
type health struct {
	t    *testing.T
	p    *providertest.Process
	base string
}

func (h *health) status(path string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.base+path, http.NoBody)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

func (h *health) alive(when string) {
	h.t.Helper()
	if h.p.Exited() {
		h.t.Fatalf("the provider exited (code %d) %s\nlog tail:\n%s", h.p.ExitCode(), when, h.p.Tail())
	}
}

func (h *health) ok(path string) {
	h.t.Helper()
	code, err := h.status(path)
	if err != nil || code != http.StatusOK {
		h.t.Fatalf("GET %s = %d, %v; want 200\nlog tail:\n%s", path, code, err, h.p.Tail())
	}
}

func (h *health) eventuallyOK(path string) {
	h.t.Helper()
	h.eventually("GET "+path+" to answer 200", func() bool {
		code, err := h.status(path)
		return err == nil && code == http.StatusOK
	})
}

// staysOK checks for d that the process runs and both probes answer 200.
func (h *health) staysOK(d time.Duration, when string) {
	h.t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		h.alive(when)
		h.ok("/healthz")
		h.ok("/readyz")
	}
}

func (h *health) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		h.alive("while waiting for " + what)
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out after %s waiting for %s\nlog tail:\n%s", wait, what, h.p.Tail())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// packageCRDs reads package/crds, by kind.
func packageCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	dir, err := testenv.DefaultCRDDir()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s: %v", dir, err)
	}
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		crds[crd.Spec.Names.Kind] = crd
	}
	return crds
}

// installCRD creates the CRD of kind and waits until it is established. The
// test's cleanup deletes it again (with every object of its kind) and waits
// until it is gone, so the next run starts with no CRD again.
func installCRD(ctx context.Context, t *testing.T, kube client.Client, crds map[string]*apiextensionsv1.CustomResourceDefinition, kind string) {
	t.Helper()
	crd, ok := crds[kind]
	if !ok {
		t.Fatalf("package/crds has no CRD for %s", kind)
	}
	if err := kube.Create(ctx, crd.DeepCopy()); err != nil {
		t.Fatalf("create CRD %s: %v", crd.Name, err)
	}
	t.Cleanup(func() { uninstallCRD(t, kube, crd.Name) }) //nolint:contextcheck // a cleanup outlives ctx: uninstallCRD makes its own
	deadline := time.Now().Add(wait)
	for {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := kube.Get(ctx, types.NamespacedName{Name: crd.Name}, got); err == nil && established(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s not established after %s", crd.Name, wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func uninstallCRD(t *testing.T, kube client.Client, name string) {
	t.Helper()
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := client.IgnoreNotFound(kube.Delete(ctx, crd)); err != nil {
		t.Errorf("delete CRD %s: %v", name, err)
		return
	}
	deadline := time.Now().Add(wait)
	for err := kube.Get(ctx, types.NamespacedName{Name: name}, crd); !kerrors.IsNotFound(err); err = kube.Get(ctx, types.NamespacedName{Name: name}, crd) {
		if time.Now().After(deadline) {
			t.Errorf("CRD %s still there %s after its deletion", name, wait)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// freeAddress returns a loopback address no one listens on right now.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
