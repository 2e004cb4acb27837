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

package metrics_test

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubemox/provider-proxmox/internal/metrics"
	"github.com/kubemox/provider-proxmox/internal/metrics/metricstest"
)

func gather(t *testing.T, reg prometheus.Gatherer) metricstest.Samples {
	t.Helper()
	s, err := metricstest.Gather(reg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func names(s metricstest.Samples) []string {
	out := make([]string, 0, len(s))
	for _, smp := range s {
		out = append(out, smp.String())
	}
	sort.Strings(out)
	return out
}

func TestSeriesAndLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.NewProxmox(reg)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Connection("prod")
	c.ObserveRequest("GET", "/nodes/{node}/qemu/{vmid}/config", 200, 30*time.Millisecond)
	c.ObserveRequest("POST", "/access/ticket", 0, time.Second)
	c.ObserveTask("qmclone", 12*time.Second, false, "OK")
	c.ObserveTask("qmstart", time.Second, true, "start failed: QEMU exited with code 1")
	c.ObserveTask("UPID:pve:secret", time.Second, true, "received interrupt")
	c.ObserveTask("vzdump", time.Second, true, "unexpected status")
	m.SetConnectionReady("prod", true)
	m.CountClientRebuild("prod")
	m.SetEndpoints("prod", map[string]int{"Down": 1}, []string{"Healthy", "Down"})

	want := []string{
		`proxmox_client_rebuilds_total{connection="prod"}`,
		`proxmox_connection_endpoints{connection="prod",health="Down"}`,
		`proxmox_connection_endpoints{connection="prod",health="Healthy"}`,
		`proxmox_connection_ready{connection="prod"}`,
		`proxmox_request_duration_seconds_count{connection="prod",method="GET",route="/nodes/{node}/qemu/{vmid}/config"}`,
		`proxmox_request_duration_seconds_count{connection="prod",method="POST",route="/access/ticket"}`,
		`proxmox_request_duration_seconds_sum{connection="prod",method="GET",route="/nodes/{node}/qemu/{vmid}/config"}`,
		`proxmox_request_duration_seconds_sum{connection="prod",method="POST",route="/access/ticket"}`,
		`proxmox_requests_in_flight{connection="prod"}`,
		`proxmox_requests_total{code="200",connection="prod",method="GET",route="/nodes/{node}/qemu/{vmid}/config"}`,
		`proxmox_requests_total{code="error",connection="prod",method="POST",route="/access/ticket"}`,
		`proxmox_requests_waiting{connection="prod"}`,
		`proxmox_task_duration_seconds_count{connection="prod",type="other"}`,
		`proxmox_task_duration_seconds_count{connection="prod",type="qmclone"}`,
		`proxmox_task_duration_seconds_count{connection="prod",type="qmstart"}`,
		`proxmox_task_duration_seconds_count{connection="prod",type="vzdump"}`,
		`proxmox_task_duration_seconds_sum{connection="prod",type="other"}`,
		`proxmox_task_duration_seconds_sum{connection="prod",type="qmclone"}`,
		`proxmox_task_duration_seconds_sum{connection="prod",type="qmstart"}`,
		`proxmox_task_duration_seconds_sum{connection="prod",type="vzdump"}`,
		`proxmox_task_failures_total{connection="prod",exitstatus="error",type="qmstart"}`,
		`proxmox_task_failures_total{connection="prod",exitstatus="interrupted",type="other"}`,
		`proxmox_task_failures_total{connection="prod",exitstatus="unexpected",type="vzdump"}`,
	}
	s := gather(t, reg)
	if diff := cmp.Diff(want, names(s)); diff != "" {
		t.Errorf("series: -want +got:\n%s", diff)
	}
	if v, _ := s.Sum(metrics.TaskDurationSeconds+"_sum", map[string]string{"type": "qmclone"}); v != 12 {
		t.Errorf("qmclone duration sum = %v, want 12", v)
	}
	if v, _ := s.Sum(metrics.ConnectionReady, nil); v != 1 {
		t.Errorf("ready = %v, want 1", v)
	}
	m.SetConnectionReady("prod", false)
	if v, _ := gather(t, reg).Sum(metrics.ConnectionReady, nil); v != 0 {
		t.Errorf("ready after a failed verification = %v, want 0", v)
	}
}

func TestForgetConnectionDropsOnlyItsSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.NewProxmox(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, conn := range []string{"gone", "kept"} {
		m.Connection(conn).ObserveRequest("GET", "/version", 200, time.Millisecond)
		m.Connection(conn).ObserveTask("qmstart", time.Second, true, "boom")
		m.SetConnectionReady(conn, true)
		m.CountClientRebuild(conn)
	}
	m.ForgetConnection("gone")
	for _, smp := range gather(t, reg) {
		if smp.Labels[metrics.LabelConnection] != "kept" {
			t.Errorf("series of a forgotten connection remains: %s", smp)
		}
	}
}

// TestSecondProviderSharesCollectors is what happens when a test process
// builds two providers on controller-runtime's one registry: both report,
// neither fails.
func TestSecondProviderSharesCollectors(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, err := metrics.NewProxmox(reg)
	if err != nil {
		t.Fatal(err)
	}
	second, err := metrics.NewProxmox(reg)
	if err != nil {
		t.Fatalf("second NewProxmox on the same registry: %v", err)
	}
	first.CountClientRebuild("a")
	second.CountClientRebuild("a")
	if v, _ := gather(t, reg).Sum(metrics.ClientRebuildsTotal, map[string]string{"connection": "a"}); v != 2 {
		t.Errorf("rebuilds = %v, want 2 (one from each provider)", v)
	}
}

// TestNilMetricsMeasureNothing: a provider or client built without metrics
// calls the same methods.
func TestNilMetricsMeasureNothing(t *testing.T) {
	var m *metrics.Proxmox
	c := m.Connection("x")
	if c != nil {
		t.Fatalf("Connection of nil metrics = %v, want nil", c)
	}
	c.ObserveRequest("GET", "/version", 200, time.Millisecond)
	c.ObserveTask("qmstart", time.Second, false, "OK")
	m.SetConnectionReady("x", true)
	m.SetEndpoints("x", map[string]int{"Down": 1}, []string{"Down"})
	m.SetCertificateExpiries(nil)
	m.SetSnapshotPolicyRuns(nil)
	m.CountClientRebuild("x")
	m.ForgetConnection("x")
}

// TestStatusGaugesFollowTheResources: a certificate's expiry is reported
// in seconds since the epoch, and a resource gone from the next recording
// loses its series.
func TestStatusGaugesFollowTheResources(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.NewProxmox(reg)
	if err != nil {
		t.Fatal(err)
	}
	expiry := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	a := types.NamespacedName{Namespace: "pve", Name: "node-a"}
	b := types.NamespacedName{Namespace: "pve", Name: "node-b"}
	m.SetCertificateExpiries(map[types.NamespacedName]time.Time{a: expiry, b: expiry})
	m.SetSnapshotPolicyRuns(map[types.NamespacedName]metrics.SnapshotPolicyRuns{a: {Next: expiry}})
	s := gather(t, reg)
	if v, _ := s.Sum(metrics.CertificateExpiry, map[string]string{"namespace": "pve", "name": "node-a"}); v != float64(expiry.Unix()) {
		t.Errorf("expiry = %v, want %v", v, expiry.Unix())
	}
	if _, found := s.Sum(metrics.SnapshotPolicyLastRun, nil); found {
		t.Errorf("a policy that never ran has a %s series, want none", metrics.SnapshotPolicyLastRun)
	}
	m.SetCertificateExpiries(map[types.NamespacedName]time.Time{a: expiry})
	want := []string{
		`proxmox_custom_certificate_expiry_timestamp_seconds{name="node-a",namespace="pve"}`,
		`proxmox_snapshot_policy_next_run_timestamp_seconds{name="node-a",namespace="pve"}`,
	}
	if diff := cmp.Diff(want, names(gather(t, reg))); diff != "" {
		t.Errorf("series after node-b's certificate went: -want +got:\n%s", diff)
	}
}
