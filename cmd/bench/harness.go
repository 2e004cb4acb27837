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

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

// settings are what every program prints with its figures.
type settings struct {
	poll          time.Duration
	rate          int
	cloneMin      time.Duration
	cloneMax      time.Duration
	create, start time.Duration
	lag           time.Duration
	nodes         int
	// concurrent is the connections' maxConcurrentRequests; 0 keeps the default.
	concurrent int32
	// logRequests makes the simulator keep its request log (rotation).
	logRequests bool
	// simSeed seeds the simulator's fault dice and clone run times (soak); 0 lets it pick.
	simSeed uint64
}

func (s settings) String() string {
	return fmt.Sprintf("--poll=%s --max-reconcile-rate=%d; connection maxConcurrentRequests %d (0: default 4); simulator: %d nodes, tasks qmclone %s-%s, qmcreate %s, qmstart %s, /cluster/resources lag %s",
		s.poll, s.rate, s.concurrent, s.nodes, s.cloneMin, s.cloneMax, s.create, s.start, s.lag)
}

func (s settings) simOptions() pvesim.Options {
	nodes := make([]string, s.nodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("pve%d", i+1)
	}
	return pvesim.Options{
		Nodes: nodes,
		TaskDurations: map[string]time.Duration{
			"qmclone": s.cloneMin, "qmcreate": s.create, "qmstart": s.start, "": 500 * time.Millisecond,
		},
		TaskDurationsMax: map[string]time.Duration{"qmclone": s.cloneMax},
		ResourcesLag:     s.lag,
		LogRequests:      s.logRequests,
		Seed:             s.simSeed,
	}
}

// world is one run's API server, simulator and provider binary.
type world struct {
	set        settings
	env        *testenv.Env
	kube       client.Client
	sim        *pvesim.Server
	dir        string
	binary     string
	kubeconfig string
	procs      []*process
}

// openWorld starts a world and its provider, seeds the templates on every
// node and creates the bench namespace; stop tears it all down.
func openWorld(ctx context.Context, s settings) (*world, *process, error) {
	w, err := newWorld(s)
	if err != nil {
		return nil, nil, err
	}
	p, err := w.startProvider(ctx)
	if err == nil {
		err = w.seedTemplates()
	}
	if err == nil {
		err = w.namespace(ctx, benchNS)
	}
	if err != nil {
		w.stop()
		return nil, nil, err
	}
	return w, p, nil
}

// newWorld starts the control plane and the simulator and builds the
// provider; stop tears everything down.
func newWorld(s settings) (*world, error) {
	w := &world{set: s}
	var err error
	if w.dir, err = os.MkdirTemp("", "provider-bench-"); err != nil {
		return nil, err
	}
	if w.binary, err = providertest.BuildProvider(w.dir); err != nil {
		return nil, err
	}
	if w.env, err = testenv.Start(); err != nil {
		return nil, err
	}
	w.kubeconfig = filepath.Join(w.dir, "kubeconfig")
	if err := providertest.WriteKubeconfig(w.env.Config, w.kubeconfig); err != nil {
		return nil, err
	}
	if w.kube, err = providertest.NewClient(w.env.Config); err != nil {
		return nil, err
	}
	if w.sim, err = pvesim.Start(s.simOptions()); err != nil {
		return nil, err
	}
	return w, nil
}

// stop tears the world down and removes its directory.
func (w *world) stop() { w.close(nil) }

// close tears the world down. After a correctness failure it keeps the
// directory, whose provider-*.log files are what a replay of the seed is
// compared with, and says where it is.
func (w *world) close(failure error) {
	for _, p := range w.procs {
		p.kill()
	}
	if w.sim != nil {
		w.sim.Close()
	}
	if w.env != nil {
		_ = w.env.Stop()
	}
	if failure != nil {
		fmt.Fprintf(os.Stderr, "the provider's logs are kept in %s\n", w.dir)
		return
	}
	_ = os.RemoveAll(w.dir)
}

// process is one run of the provider binary.
type process struct {
	cmd     *exec.Cmd
	log     *os.File
	metrics string // host:port of /metrics
	done    chan struct{}
}

// startProvider runs the provider binary with the world's settings; its
// output goes to a file in the run's directory.
func (w *world) startProvider(ctx context.Context) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &process{metrics: "127.0.0.1:" + strconv.Itoa(port), done: make(chan struct{})}
	if p.log, err = os.CreateTemp(w.dir, "provider-*.log"); err != nil {
		return nil, err
	}
	p.cmd = exec.CommandContext(ctx, w.binary, //nolint:gosec // the provider this program just built, with its own flags
		"--poll="+w.set.poll.String(), "--max-reconcile-rate="+strconv.Itoa(w.set.rate),
		"--metrics-bind-address="+p.metrics, "--health-probe-bind-address=")
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+w.kubeconfig)
	// Killed with this program too, however it ends.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		return nil, errors.Wrap(err, "cannot start the provider")
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	w.procs = append(w.procs, p)
	return p, nil
}

// kill SIGKILLs the provider and waits for it. controller-runtime v0.23.1
// spins and ignores SIGTERM while caches cannot sync, so nothing relies on
// a graceful stop.
func (p *process) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// logLines counts the lines the provider has printed so far.
func (p *process) logLines() (int, error) {
	f, err := os.Open(p.log.Name())
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}

// cpuSeconds is the provider's user+system CPU time.
func (p *process) cpuSeconds() (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid()))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) start at ") ".
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100, nil // USER_HZ is 100 on Linux
}

// memory is the provider's resident set (current and peak) in bytes.
func (p *process) memory() (rss, hwm uint64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			hwm = kb << 10
		}
	}
	return rss, hwm, nil
}

// scrape returns the provider's metrics as "name{labels}" -> value.
func (p *process) scrape() (metricSet, error) {
	resp, err := http.Get("http://" + p.metrics + "/metrics") //nolint:noctx // a local scrape with the client's defaults
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := metricSet{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out, nil
}

// metricSet is one scrape of the provider's metrics.
type metricSet map[string]float64

// sum adds the series of name whose labels contain every one of with
// (written as in the exposition, e.g. `controller="x"`).
func (m metricSet) sum(name string, with ...string) float64 {
	total := 0.0
	for series, v := range m {
		base, labels, _ := strings.Cut(series, "{")
		if base != name {
			continue
		}
		match := true
		for _, w := range with {
			if !strings.Contains(labels, w) {
				match = false
				break
			}
		}
		if match {
			total += v
		}
	}
	return total
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// namespace creates a namespace.
func (w *world) namespace(ctx context.Context, name string) error {
	return w.kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// tokenConnection creates a connection whose token secret lives in a
// Secret, and waits until it is Ready.
func (w *world) tokenConnection(ctx context.Context, ns, tokenID, secret string) error {
	name := benchConn
	w.sim.AddToken(tokenID, secret)
	if err := w.kube.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-token"},
		StringData: map[string]string{"token": secret},
	}); err != nil {
		return err
	}
	return w.connection(ctx, &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ProxmoxConnectionSpec{
		Endpoint: w.sim.URL(), CABundle: string(w.sim.CAPEM()), TokenID: tokenID,
		SecretFrom:            &v1alpha1.SecretKeySelector{Namespace: ns, Name: name + "-token", Key: "token"},
		MaxConcurrentRequests: w.set.concurrent,
	}})
}

// passwordConnection creates a connection with an inline password and
// waits until it is Ready.
func (w *world) passwordConnection(ctx context.Context, name, user, password string) error {
	w.sim.AddUser(user, password)
	return w.connection(ctx, &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ProxmoxConnectionSpec{
		Endpoint: w.sim.URL(), CABundle: string(w.sim.CAPEM()), Username: user, Password: password,
		MaxConcurrentRequests: w.set.concurrent,
	}})
}

func (w *world) connection(ctx context.Context, pc *v1alpha1.ProxmoxConnection) error {
	if err := w.kube.Create(ctx, pc); err != nil {
		return err
	}
	return poll(ctx, 2*time.Minute, "connection "+pc.Name+" Ready", func() (bool, string) {
		got := &v1alpha1.ProxmoxConnection{}
		if err := w.kube.Get(ctx, types.NamespacedName{Name: pc.Name}, got); err != nil {
			return false, err.Error()
		}
		c := got.Status.GetCondition(xpv2.TypeReady)
		return c.Status == corev1.ConditionTrue, c.Message
	})
}

// poll calls cond every 500 ms until it holds or timeout passes.
func poll(ctx context.Context, timeout time.Duration, what string, cond func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		ok, state := cond()
		if ok {
			return nil
		}
		last = state
		if time.Now().After(deadline) {
			return errors.Errorf("no %s after %s: %s", what, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// vmStates counts the VMs of ns that are Ready and Synced, and all of them.
func (w *world) vmStates(ctx context.Context, ns string) (ready, total int, err error) {
	l := &v1alpha1.VirtualMachineList{}
	if err := w.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
		return 0, 0, err
	}
	for i := range l.Items {
		vm := &l.Items[i]
		if vm.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue && vm.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue {
			ready++
		}
	}
	return ready, len(l.Items), nil
}

// waitAllReady waits until n VMs of ns are Ready, printing progress, and
// returns when that happened.
func (w *world) waitAllReady(ctx context.Context, ns string, n int, timeout time.Duration) (time.Time, error) {
	lastPrint := time.Now()
	err := poll(ctx, timeout, fmt.Sprintf("%d VMs Ready", n), func() (bool, string) {
		ready, total, err := w.vmStates(ctx, ns)
		if err != nil {
			return false, err.Error()
		}
		state := fmt.Sprintf("%d/%d Ready", ready, total)
		if time.Since(lastPrint) > 15*time.Second {
			fmt.Printf("  %s\n", state)
			lastPrint = time.Now()
		}
		return ready == n && total == n, state
	})
	return time.Now(), err
}

// warnings sums the Warning events of ns by reason: each is a reconcile
// that ended in an error (an event's count includes its repetitions).
func (w *world) warnings(ctx context.Context, ns string) (map[string]int, error) {
	l := &corev1.EventList{}
	if err := w.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range l.Items {
		if e.Type == corev1.EventTypeWarning {
			out[e.Reason] += int(max(e.Count, 1))
		}
	}
	return out, nil
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
