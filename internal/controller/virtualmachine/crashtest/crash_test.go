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

// Package crashtest SIGKILLs the provider binary in the middle of a clone
// and checks a restarted provider ends with exactly one VM, Ready without
// help. It has its own API server: the provider runs as a subprocess here,
// so no in-process provider may compete for the resources.
package crashtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis"
	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	wait         = 120 * time.Second
	node         = "lowtower"
	templateName = "debian-12"
	connName     = "crash"
	tokenID      = "root@pam!kubemox"
)

var (
	env        *testenv.Env
	binary     string
	kubeconfig string
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	if os.Getenv(testenv.SkipEnvVar) == "1" {
		fmt.Fprintln(os.Stderr, "crashtest: integration tests disabled by", testenv.SkipEnvVar)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "vm-crashtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	binary = filepath.Join(dir, "provider")
	build := exec.Command("go", "build", "-o", binary, "github.com/kubemox/provider-proxmox/cmd/provider")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the provider:", err)
		return 1
	}
	started, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	env = started
	defer func() { _ = env.Stop() }()
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(env.Config, kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "kubeconfig:", err)
		return 1
	}
	return m.Run()
}

func writeKubeconfig(cfg *rest.Config, path string) error {
	c := clientcmdapi.NewConfig()
	c.Clusters["env"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	c.AuthInfos["env"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	c.Contexts["env"] = &clientcmdapi.Context{Cluster: "env", AuthInfo: "env"}
	c.CurrentContext = "env"
	return clientcmd.WriteToFile(*c, path)
}

// providerProcess is one run of the provider binary.
type providerProcess struct {
	cmd  *exec.Cmd
	logs *bytes.Buffer
	mu   *sync.Mutex
	done chan struct{}
}

type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func startProvider(t *testing.T) *providerProcess {
	t.Helper()
	p := &providerProcess{logs: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan struct{})}
	p.cmd = exec.Command(binary, "--poll=5s", "--metrics-bind-address=0", "--health-probe-bind-address=", "--debug")
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	w := lockedWriter{mu: p.mu, buf: p.logs}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start provider: %v", err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill(t) })
	return p
}

// kill SIGKILLs the provider: no deferred cleanup, no graceful shutdown.
func (p *providerProcess) kill(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("provider did not die after SIGKILL")
	}
}

func (p *providerProcess) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.logs.String()
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return s
}

type fixture struct {
	kube client.Client
	sim  *pvesim.Server
	ns   string
	conn string
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, pvesim.Options{}) }

func newFixtureWith(t *testing.T, opts pvesim.Options) *fixture {
	t.Helper()
	env.Require(t)
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	opts.Nodes = []string{node}
	sim, err := pvesim.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	sim.AddToken(tokenID, "crash-secret")
	if err := sim.AddTemplate(node, 9000, templateName); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "crash-"}}
	if err := kube.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{GenerateName: connName + "-"}, Spec: v1alpha1.ProxmoxConnectionSpec{
		Endpoint: sim.URL(), TokenID: tokenID, Secret: "crash-secret", CABundle: string(sim.CAPEM()),
	}}
	if err := kube.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), pc) })
	f := &fixture{kube: kube, sim: sim, ns: ns.Name}
	f.conn = pc.Name
	return f
}

func (f *fixture) vm(name string) *v1alpha1.VirtualMachine {
	return &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}, Spec: v1alpha1.VirtualMachineSpec{
		ConnectionRef: &v1alpha1.ConnectionReference{Name: f.conn}, Name: name, NodeName: node,
		Template: &v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 2, Memory: 2048}},
	}}
}

func (f *fixture) waitReady(t *testing.T, p *providerProcess, name string) *v1alpha1.VirtualMachine {
	t.Helper()
	deadline := time.Now().Add(wait)
	vm := &v1alpha1.VirtualMachine{}
	for {
		err := f.kube.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: name}, vm)
		if err == nil && vm.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue && vm.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue {
			return vm
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not Ready after %s: err %v annotations %v status %+v\nprovider log tail:\n%s", name, wait, err, vm.Annotations, vm.Status, p.tail())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitFor polls cond until it holds, failing with the provider's log tail
// after the test's deadline.
func waitFor(t *testing.T, p *providerProcess, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s\nprovider log tail:\n%s", what, wait, p.tail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertOneVM checks the crash left exactly one VM: the template plus one
// guest, carrying the marker of ns/name.
func (f *fixture) assertOneVM(t *testing.T, name string) {
	t.Helper()
	if n := f.guestsMarked(name); n != 1 {
		t.Errorf("%d guests carry the resource's marker, want 1", n)
	}
	if got := len(f.sim.Guests()); got != 2 {
		t.Errorf("guests = %d, want template + 1", got)
	}
}

// guestsMarked counts the guests carrying the marker of ns/name.
func (f *fixture) guestsMarked(name string) int {
	n := 0
	for _, g := range f.sim.Guests() {
		if strings.Contains(g.Config["description"], "crossplane: "+f.ns+"/"+name+" uid=") {
			n++
		}
	}
	return n
}

// The provider dies while PVE has applied the clone but its answer has not
// arrived: the restarted provider finds the guest at the VMID recorded
// before the call and makes no second one.
func TestKilledWhileCloneResponseHeld(t *testing.T) {
	f := newFixture(t)
	hold := f.sim.HoldResponse("POST", "/nodes/*/qemu/*/clone")
	p1 := startProvider(t)
	if err := f.kube.Create(context.Background(), f.vm("held")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.Held():
	case <-time.After(wait):
		t.Fatalf("the clone request never arrived\nprovider log tail:\n%s", p1.tail())
	}
	p1.kill(t)
	hold.Release()
	if got := len(f.sim.Guests()); got != 2 {
		t.Fatalf("guests after the kill = %d, want template + 1", got)
	}
	p2 := startProvider(t)
	vm := f.waitReady(t, p2, "held")
	f.assertOneVM(t, "held")
	if vm.Status.Status.State != "running" {
		t.Errorf("state = %q, want running", vm.Status.Status.State)
	}
}

// The simulator applies the clone and drops the connection; the provider is
// killed right after and restarted: still exactly one VM, Ready.
func TestKilledAfterDroppedCloneResponse(t *testing.T) {
	f := newFixture(t)
	f.sim.DropAfterApply("POST", "/nodes/*/qemu/*/clone")
	p1 := startProvider(t)
	if err := f.kube.Create(context.Background(), f.vm("dropped")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p1, "a clone applied", func() bool { return len(f.sim.Guests()) >= 2 })
	p1.kill(t)
	p2 := startProvider(t)
	f.waitReady(t, p2, "dropped")
	f.assertOneVM(t, "dropped")
}

// The provider dies while PVE's clone task runs (the new config exists,
// locked "clone", without our marker yet): the restarted provider waits for
// it as its own, and never picks another VMID.
func TestKilledWhileCloneTaskRuns(t *testing.T) {
	f := newFixtureWith(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmclone": 4 * time.Second}})
	p1 := startProvider(t)
	if err := f.kube.Create(context.Background(), f.vm("slow")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p1, "a clone under way", func() bool {
		for _, g := range f.sim.Guests() {
			if g.Lock == "clone" {
				return true
			}
		}
		return false
	})
	p1.kill(t)
	p2 := startProvider(t)
	f.waitReady(t, p2, "slow")
	f.assertOneVM(t, "slow")
}

// The provider dies after it stored the picked VMID on the resource but
// before PVE applied the clone: the clone request is parked by the
// simulator (a latency rule) and then answered 500 without being applied,
// so after the kill the resource carries the VMID, create-pending and no
// guest. The restarted provider clones at that same VMID: one VM, Ready.
func TestKilledBetweenVMIDStoredAndClone(t *testing.T) {
	f := newFixture(t)
	f.sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{
		Method: "POST", PathPattern: "/nodes/*/qemu/*/clone", Latency: time.Hour, ErrorRate: 1, Message: "never applied",
	}}})
	p1 := startProvider(t)
	if err := f.kube.Create(context.Background(), f.vm("early")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p1, "the clone request", func() bool { return cloneRequests(f.sim) > 0 })
	p1.kill(t)
	// New requests go through; the parked one is answered 500, unapplied,
	// when the simulator closes.
	f.sim.SetFaults(pvesim.Faults{})

	stored := &v1alpha1.VirtualMachine{}
	if err := f.kube.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "early"}, stored); err != nil {
		t.Fatal(err)
	}
	vmid := stored.GetAnnotations()["crossplane.io/external-name"]
	if vmid == "" {
		t.Fatalf("no VMID stored before the clone request: annotations %v", stored.GetAnnotations())
	}
	if _, ok := stored.GetAnnotations()["crossplane.io/external-create-succeeded"]; ok {
		t.Fatalf("create recorded as succeeded although the clone was never answered: %v", stored.GetAnnotations())
	}
	if got := len(f.sim.Guests()); got != 1 {
		t.Fatalf("guests after the kill = %d, want the template only", got)
	}

	p2 := startProvider(t)
	vm := f.waitReady(t, p2, "early")
	f.assertOneVM(t, "early")
	if got := vm.GetAnnotations()["crossplane.io/external-name"]; got != vmid {
		t.Errorf("external name = %s, want the VMID stored before the kill (%s)", got, vmid)
	}
	if _, ok := f.sim.Guest(mustAtoi(t, vmid)); !ok {
		t.Errorf("no guest at the stored VMID %s", vmid)
	}
}

// cloneRequests counts the clone requests the simulator received (counted
// before any fault rule delays them).
func cloneRequests(sim *pvesim.Server) int {
	n := 0
	for ep, k := range sim.Counters().ByEndpoint {
		if strings.HasPrefix(ep, "POST ") && strings.HasSuffix(ep, "/clone") {
			n += k
		}
	}
	return n
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number: %v", s, err)
	}
	return n
}
