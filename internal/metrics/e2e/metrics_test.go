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

// Package e2e scrapes the provider's /metrics over HTTP while it manages a
// connection and a VirtualMachine: a real kube-apiserver (testenv), the
// provider's manager in-process with its metrics server on loopback, and
// the PVE simulator over HTTPS.
package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/metrics"
	"github.com/kubemox/provider-proxmox/internal/metrics/metricstest"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	// wait bounds how long the provider may take to react; generous for a
	// busy 2-core machine.
	wait = 90 * time.Second
	// Names a label must never carry; distinctive, so a substring search
	// finds them.
	node         = "rack7-node"
	templateName = "golden-image"
	templateID   = 9000
	vmName       = "payroll-web-canary"
	connName     = "metrics-lab"
	tokenID      = "root@pam!metrics"
	credNS       = "metrics-creds"
	credName     = "proxmox-token"
	firstSecret  = "first-token-canary"
	secondSecret = "second-token-canary"
	// cloneTook is how long the simulator's clone task runs.
	cloneTook = 1500 * time.Millisecond
)

// crossplane-runtime's managed resource state metrics, labelled by GVK.
const (
	mrExists = "crossplane_managed_resource_exists"
	mrReady  = "crossplane_managed_resource_ready"
	mrSynced = "crossplane_managed_resource_synced"
)

var (
	env        *testenv.Env
	h          *providertest.Harness
	metricsURL string
)

func TestMain(m *testing.M) {
	addr, err := freeLoopbackAddress()
	if err != nil {
		fmt.Fprintln(os.Stderr, "metrics e2e:", err)
		os.Exit(1)
	}
	metricsURL = "http://" + addr + "/metrics"
	o := providertest.Options{
		Provider: provider.Options{PollInterval: 10 * time.Second, MetricsBindAddress: addr},
		Sim: pvesim.Options{
			Nodes:         []string{node},
			TaskDurations: map[string]time.Duration{"qmclone": cloneTook, "": 200 * time.Millisecond},
		},
	}
	os.Exit(providertest.Main(m, "metrics e2e", &env, o, func(_ context.Context, ph *providertest.Harness) error {
		h = ph
		return nil
	}, nil))
}

// freeLoopbackAddress returns a loopback address with a port nothing
// listens on right now, for the provider's metrics server.
func freeLoopbackAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// The provider's /metrics, scraped over HTTP after a connection and a VM
// became Ready and after a credential rotation, reports the Proxmox VE
// series with the right values, and no label names the VM, its VMID, its
// node or a credential.
func TestMetricsAfterCreateAndRotation(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	h.Sim.AddToken(tokenID, firstSecret)
	if err := h.Sim.AddTemplate(node, templateID, templateName); err != nil {
		t.Fatal(err)
	}
	if err := h.CreateTokenConnection(ctx, connName, tokenID, credNS, credName, firstSecret); err != nil {
		t.Fatal(err)
	}
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: connName}}
	h.WaitFor(t, pc, "Ready", wait, func() bool { return pc.Status.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue })

	ns := h.Namespace(t, "metrics-")
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: vmName}, Spec: vmSpec()}
	if err := h.Kube.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, vm, "Ready and Synced", wait, func() bool {
		return vm.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue &&
			vm.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue
	})
	vmid := meta.GetExternalName(vm)

	conn := map[string]string{metrics.LabelConnection: connName}
	with := func(kv ...string) map[string]string {
		out := map[string]string{metrics.LabelConnection: connName}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	s := scrapeUntil(t, "the clone request, its task and the start task", func(s metricstest.Samples) bool {
		clones, _ := s.Sum(metrics.RequestsTotal, with("method", "POST", "route", "/nodes/{node}/qemu/{vmid}/clone", "code", "200"))
		cloneTasks, _ := s.Sum(metrics.TaskDurationSeconds+"_count", with("type", "qmclone"))
		starts, _ := s.Sum(metrics.TaskDurationSeconds+"_count", with("type", "qmstart"))
		return clones >= 1 && cloneTasks >= 1 && starts >= 1
	})
	if n, _ := s.Sum(metrics.RequestDurationSeconds+"_count", conn); n <= 0 {
		t.Errorf("%s_count{connection=%q} = %v, want > 0", metrics.RequestDurationSeconds, connName, n)
	}
	requests, _ := s.Sum(metrics.RequestsTotal, conn)
	if latencies, _ := s.Sum(metrics.RequestDurationSeconds+"_count", conn); latencies != requests {
		t.Errorf("%v latency observations for %v requests, want one each", latencies, requests)
	}
	for _, route := range []string{"/version", "/cluster/resources", "/nodes/{node}/qemu/{vmid}/pending", "/nodes/{node}/tasks/{upid}/status"} {
		if n, _ := s.Sum(metrics.RequestsTotal, with("method", "GET", "route", route, "code", "200")); n < 1 {
			t.Errorf("no successful GET %s counted", route)
		}
	}
	if sum, _ := s.Sum(metrics.TaskDurationSeconds+"_sum", with("type", "qmclone")); sum < cloneTook.Seconds()/2 {
		t.Errorf("qmclone took %.3fs by the metrics, want about the simulator's %s", sum, cloneTook)
	}
	if n, found := s.Sum(metrics.TaskFailuresTotal, conn); n != 0 {
		t.Errorf("%s{connection=%q} = %v (present %v), want no failed task", metrics.TaskFailuresTotal, connName, n, found)
	}
	if v, found := s.Sum(metrics.ConnectionReady, conn); !found || v != 1 {
		t.Errorf("%s{connection=%q} = %v (present %v), want 1", metrics.ConnectionReady, connName, v, found)
	}
	rebuilds, _ := s.Sum(metrics.ClientRebuildsTotal, conn)

	// crossplane-runtime's managed resource state metrics count the VM
	// (the only one in this test's cluster) once its recorder ticked.
	vmGVK := map[string]string{"gvk": v1alpha1.VirtualMachineGroupVersionKind.String()}
	scrapeUntil(t, "the VirtualMachine counted as existing, ready and synced", func(s metricstest.Samples) bool {
		return s.Has(mrExists, vmGVK, 1) && s.Has(mrReady, vmGVK, 1) && s.Has(mrSynced, vmGVK, 1)
	})

	rotate(t)
	s = scrapeUntil(t, "the rebuild after the rotation", func(s metricstest.Samples) bool {
		n, _ := s.Sum(metrics.ClientRebuildsTotal, conn)
		return n > rebuilds
	})
	if n, _ := s.Sum(metrics.ClientRebuildsTotal, conn); n != rebuilds+1 {
		t.Errorf("%s{connection=%q} = %v after one rotation, want %v", metrics.ClientRebuildsTotal, connName, n, rebuilds+1)
	}
	if v, _ := s.Sum(metrics.ConnectionReady, conn); v != 1 {
		t.Errorf("%s{connection=%q} = %v after the rotation, want 1", metrics.ConnectionReady, connName, v)
	}

	assertNoLabelNames(t, s, vmid, []string{vmName, node, templateName, firstSecret, secondSecret, tokenID, ns + "/" + vmName})

	// The series of a deleted connection go with it.
	if err := h.Kube.Delete(ctx, vm); err != nil {
		t.Fatal(err)
	}
	h.WaitGone(t, vm, wait)
	scrapeUntil(t, "no VirtualMachine counted once it is gone", func(s metricstest.Samples) bool {
		return s.Has(mrExists, vmGVK, 0)
	})
	deleteUsages(t)
	if err := h.Kube.Delete(ctx, &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: connName}}); err != nil {
		t.Fatal(err)
	}
	scrapeUntil(t, "no series of the deleted connection", func(s metricstest.Samples) bool {
		for _, smp := range s {
			if smp.Labels[metrics.LabelConnection] == connName {
				return false
			}
		}
		return true
	})
}

// vmSpec clones the template with its own disks and network.
func vmSpec() v1alpha1.VirtualMachineSpec {
	return v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		Name:         vmName, NodeName: node,
		Template: &v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 1024}},
	}
}

// rotate replaces the token's secret in PVE (the old one stops working)
// and in the Secret, and waits for the connection to verify the new one.
func rotate(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	h.Sim.AddToken(tokenID, secondSecret)
	sec := &corev1.Secret{}
	if err := h.Kube.Get(ctx, types.NamespacedName{Namespace: credNS, Name: credName}, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data = nil
	sec.StringData = map[string]string{providertest.TokenSecretKey: secondSecret}
	if err := h.Kube.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: connName}}
	h.WaitFor(t, pc, "Ready with the rotated Secret", wait, func() bool {
		return pc.Status.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue &&
			len(pc.Status.ObservedSecrets) > 0 && pc.Status.ObservedSecrets[0].ResourceVersion == sec.ResourceVersion
	})
}

// deleteUsages deletes the connection's ProviderConfigUsages, as the
// garbage collector (which envtest does not run) would once their
// VirtualMachine is gone, so the connection's deletion is not blocked.
func deleteUsages(t *testing.T) {
	t.Helper()
	l := &v1alpha1.ProviderConfigUsageList{}
	if err := h.Kube.List(context.Background(), l, client.MatchingLabels{xpv2.LabelKeyProviderName: connName}); err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		if err := h.Kube.Delete(context.Background(), &l.Items[i]); err != nil && !kerrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}

// vmidToken matches a label value's parts that could be a VMID.
var vmidToken = regexp.MustCompile(`\d+`)

// assertNoLabelNames fails t when a label of the provider's Proxmox or
// managed-resource series carries one of names, or the VMID as a number of
// its own.
func assertNoLabelNames(t *testing.T, s metricstest.Samples, vmid string, names []string) {
	t.Helper()
	if _, err := strconv.Atoi(vmid); err != nil {
		t.Fatalf("external name %q is not a VMID", vmid)
	}
	checked := 0
	for _, smp := range s {
		if !strings.HasPrefix(smp.Name, "proxmox_") && !strings.HasPrefix(smp.Name, "crossplane_") {
			continue
		}
		checked++
		for k, v := range smp.Labels {
			for _, name := range names {
				if strings.Contains(v, name) {
					t.Errorf("label %s=%q of %s contains %q", k, v, smp, name)
				}
			}
			for _, num := range vmidToken.FindAllString(v, -1) {
				if num == vmid {
					t.Errorf("label %s=%q of %s contains the VMID %s", k, v, smp, vmid)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no proxmox_ or crossplane_ series scraped")
	}
}

// scrapeUntil scrapes the provider's /metrics until cond holds.
func scrapeUntil(t *testing.T, what string, cond func(metricstest.Samples) bool) metricstest.Samples {
	t.Helper()
	var (
		s   metricstest.Samples
		err error
	)
	providertest.Eventually(t, wait, 250*time.Millisecond, func() bool {
		s, err = metricstest.Scrape(context.Background(), metricsURL)
		return err == nil && cond(s)
	}, func() string {
		return fmt.Sprintf("%s: not scraped from %s after %s; last error %v; Proxmox and managed resource series:\n%s", what, metricsURL, wait, err, providerSeries(s))
	})
	return s
}

func providerSeries(s metricstest.Samples) string {
	var b strings.Builder
	for _, smp := range s {
		if strings.HasPrefix(smp.Name, "proxmox_") || strings.HasPrefix(smp.Name, "crossplane_managed_resource_") {
			fmt.Fprintf(&b, "  %s %v\n", smp, smp.Value)
		}
	}
	return b.String()
}
