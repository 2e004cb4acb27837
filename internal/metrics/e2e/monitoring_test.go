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

package e2e

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/metrics/metricstest"
	"github.com/kubemox/provider-proxmox/internal/metrics/promqlref"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	monitoringExamples = "../../../examples/monitoring"
	monConn            = "monitoring-lab"
	monToken           = "root@pam!monitoring"
	monSecret          = "monitoring-token-canary"
	monCredNS          = "monitoring-creds"
	// failingTemplate's clones fail (a fault rule), so the provider sees
	// failed tasks.
	failingTemplateID   = 9100
	failingTemplateName = "broken-image"
)

// TestDashboardAndRulesUseExportedSeries drives the provider through what
// the dashboard and alerts show (a connection, a VM Ready then drifted and
// corrected, a clone task failing, a CustomCertificate, a snapshot policy),
// then fails if any dashboard query, variable, record or alert refers to a
// metric the provider's /metrics does not export, or to a label that
// metric does not carry.
func TestDashboardAndRulesUseExportedSeries(t *testing.T) {
	env.Require(t)
	exprs := monitoringExprs(t)
	ns := driveMonitoredResources(t)

	want := map[string]bool{}
	for _, e := range exprs {
		for _, sel := range e.refs.Selectors {
			want[sel.Metric] = true
		}
	}
	have := scrapeAll(t, want)
	for _, e := range exprs {
		checkRefs(t, e, have)
	}
	cleanUpMonitored(t, ns)
}

type parsedExpr struct {
	promqlref.Expr
	refs promqlref.Refs
}

// monitoringExprs reads and parses every expression of the examples.
func monitoringExprs(t *testing.T) []parsedExpr {
	t.Helper()
	dash, err := promqlref.DashboardExprs(monitoringExamples)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := promqlref.RuleExprs(monitoringExamples)
	if err != nil {
		t.Fatal(err)
	}
	if len(dash) < 10 || len(rules) < 7 {
		t.Fatalf("read %d dashboard queries and %d rules: the examples lost some, or the reader cannot find them", len(dash), len(rules))
	}
	out := make([]parsedExpr, 0, len(dash)+len(rules))
	for _, e := range append(dash, rules...) {
		refs, err := promqlref.Parse(e.Expr)
		if err != nil {
			t.Fatalf("%s: %v", e.Where, err)
		}
		if len(refs.Selectors) == 0 {
			t.Errorf("%s: %q names no metric", e.Where, e.Expr)
		}
		out = append(out, parsedExpr{Expr: e, refs: refs})
	}
	return out
}

// checkRefs fails t for each metric of e the scrape lacks, each matcher
// label its metric does not carry, and each grouping label none of e's
// metrics carries.
func checkRefs(t *testing.T, e parsedExpr, have map[string]map[string]bool) {
	t.Helper()
	carried := map[string]bool{}
	for _, sel := range e.refs.Selectors {
		labels, ok := have[sel.Metric]
		if !ok {
			t.Errorf("%s: metric %s is not exported", e.Where, sel.Metric)
			continue
		}
		for _, l := range sel.Labels {
			if !labels[l] {
				t.Errorf("%s: metric %s has no label %s (it has %v)", e.Where, sel.Metric, l, keys(labels))
			}
		}
		for l := range labels {
			carried[l] = true
		}
	}
	for _, l := range e.refs.Grouping {
		if !carried[l] {
			t.Errorf("%s: no metric of %q carries the label %s it groups by", e.Where, e.Expr.Expr, l)
		}
	}
}

// labelsByMetric maps each scraped metric to the labels its series carry.
// metricstest flattens a histogram into _count and _sum; its _bucket
// series are the same ones with le added.
func labelsByMetric(s metricstest.Samples) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(name string, labels map[string]string, extra ...string) {
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for l := range labels {
			out[name][l] = true
		}
		for _, l := range extra {
			out[name][l] = true
		}
	}
	for _, smp := range s {
		add(smp.Name, smp.Labels)
		if base, ok := strings.CutSuffix(smp.Name, "_count"); ok && s.Select(base+"_sum", nil) != nil {
			add(base+"_bucket", smp.Labels, "le")
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// driveMonitoredResources creates what the dashboard's panels and the
// alerts need a series of, and returns their namespace.
func driveMonitoredResources(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	h.Sim.AddToken(monToken, monSecret)
	for id, name := range map[int]string{templateID + 1: templateName + "-mon", failingTemplateID: failingTemplateName} {
		if err := h.Sim.AddTemplate(node, id, name); err != nil {
			t.Fatal(err)
		}
	}
	h.Sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{
		Method: "POST", PathPattern: "/nodes/*/qemu/9100/clone", TaskFailureRate: 1, TaskFailureMessage: "clone failed: disk error",
	}}})
	t.Cleanup(func() { h.Sim.SetFaults(pvesim.Faults{}) })
	if err := h.CreateTokenConnection(ctx, monConn, monToken, monCredNS, credName, monSecret); err != nil {
		t.Fatal(err)
	}
	ns := h.Namespace(t, "monitoring-")
	ref := v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: monConn}}
	clone := func(name, template string) *v1alpha1.VirtualMachine {
		return &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: ref, Name: name, NodeName: node,
			Template: &v1alpha1.VirtualMachineCloneSpec{Name: template, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 1024}},
		}}
	}
	vm := clone("monitored", templateName+"-mon")
	for _, o := range []*v1alpha1.VirtualMachine{vm, clone("unclonable", failingTemplateName)} {
		if err := h.Kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	h.WaitFor(t, vm, "Ready and Synced", wait, func() bool {
		return vm.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue && vm.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue
	})
	// A change made in Proxmox VE is drift the provider corrects.
	vmid, err := strconv.Atoi(meta.GetExternalName(vm))
	if err != nil {
		t.Fatalf("external name %q is not a VMID", meta.GetExternalName(vm))
	}
	if err := h.Sim.SetGuestConfig(vmid, "cores", "4"); err != nil {
		t.Fatal(err)
	}

	crt, key := providertest.SelfSignedPair(t, node+".example")
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pve-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte(crt), "tls.key": []byte(key)}}
	cc := &v1alpha1.CustomCertificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pve-cert"}, Spec: v1alpha1.CustomCertificateSpec{
		ResourceSpec: ref, NodeName: node, TLSSecretRef: &v1alpha1.SecretName{Name: "pve-tls"},
	}}
	policy := &v1alpha1.VirtualMachineSnapshotPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"}, Spec: v1alpha1.VirtualMachineSnapshotPolicySpec{
		SnapshotSchedule: "0 3 * * *", ConnectionRef: &v1alpha1.ConnectionReference{Name: monConn},
		LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"backup": "nightly"}},
	}}
	for _, o := range []client.Object{sec, cc, policy} {
		if err := h.Kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

// cleanUpMonitored deletes what driveMonitoredResources made in ns, and
// the connection, without waiting: the package's control plane goes with
// the test binary.
func cleanUpMonitored(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	for _, o := range []client.Object{
		&v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "monitored"}},
		&v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unclonable"}},
		&v1alpha1.CustomCertificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pve-cert"}},
		&v1alpha1.VirtualMachineSnapshotPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"}},
		&v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: monConn}},
	} {
		if err := h.Kube.Delete(ctx, o); err != nil && !kerrors.IsNotFound(err) {
			t.Errorf("cannot delete %s: %v", o.GetName(), err)
		}
	}
}

// scrapeAll scrapes until every metric of want is exported, or wait has
// passed; it returns the labels of the last scrape's metrics, so the
// caller names what is missing.
func scrapeAll(t *testing.T, want map[string]bool) map[string]map[string]bool {
	t.Helper()
	var have map[string]map[string]bool
	for deadline := time.Now().Add(wait); ; time.Sleep(500 * time.Millisecond) {
		s, err := metricstest.Scrape(context.Background(), metricsURL)
		if err != nil {
			t.Logf("scraping %s: %v", metricsURL, err)
		} else {
			have = labelsByMetric(s)
		}
		missing := 0
		for m := range want {
			if _, ok := have[m]; !ok {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			return have
		}
	}
}
