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

// Package monitoring checks examples/monitoring with Prometheus's own
// promtool: the PrometheusRule's rules, and every dashboard query (as a
// recording rule); and renders the dashboard with hack/dashboardpng over a
// recording of the provider's /metrics. Whether they name metrics the
// provider exports is checked against a running provider in
// internal/metrics/e2e.
package monitoring

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubemox/provider-proxmox/internal/metrics/promqlref"
)

const examples = "../../examples/monitoring"

// promtool returns the promtool cluster/local/build-tools.sh monitoring
// built.
func promtool(t *testing.T) string {
	t.Helper()
	return monitoringTool(t, "promtool")
}

// monitoringTool returns the binary name that cluster/local/build-tools.sh
// monitoring built into the tools directory (KUBEBUILDER_ASSETS, as make
// test sets it). Absent, the test is skipped, unless PROMTOOL_REQUIRED=1
// (.ci/run): CI must not pass by skipping.
func monitoringTool(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), name)
	if _, err := os.Stat(bin); err != nil || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		if os.Getenv("PROMTOOL_REQUIRED") == "1" {
			t.Fatalf("no %s at %s (KUBEBUILDER_ASSETS): run cluster/local/build-tools.sh monitoring", name, bin)
		}
		t.Skipf("no %s at %q: cluster/local/build-tools.sh monitoring builds it, and KUBEBUILDER_ASSETS must name its directory", name, bin)
	}
	return bin
}

// check runs promtool check rules on a rule file holding rules; its lint
// findings (duplicate rules, and so on) fail the test too.
func check(t *testing.T, bin string, rules []byte) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(f, rules, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "check", "rules", "--lint=all", "--lint-fatal", f).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s\n--- rules:\n%s", err, out, rules)
	}
	if !strings.Contains(string(out), "SUCCESS") {
		t.Errorf("promtool check rules said no SUCCESS:\n%s", out)
	}
}

// TestPromtoolChecksTheRules: the PrometheusRule's groups are a valid rule
// file for Prometheus.
func TestPromtoolChecksTheRules(t *testing.T) {
	bin := promtool(t)
	rules, err := promqlref.RuleFileYAML(examples)
	if err != nil {
		t.Fatal(err)
	}
	check(t, bin, rules)
}

// TestPromtoolChecksTheDashboardQueries: every dashboard query, with
// Grafana's variables replaced by what they stand for, is valid PromQL.
func TestPromtoolChecksTheDashboardQueries(t *testing.T) {
	bin := promtool(t)
	exprs, err := promqlref.DashboardExprs(examples)
	if err != nil {
		t.Fatal(err)
	}
	grafana := strings.NewReplacer("$__rate_interval", "5m", "$connection", ".*")
	type rule struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	rules := make([]rule, 0, len(exprs))
	for i, e := range exprs {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:query_%d", i), Expr: grafana.Replace(e.Expr)})
	}
	file := map[string]any{"groups": []map[string]any{{"name": "dashboard", "rules": rules}}}
	raw, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	check(t, bin, raw)
}
