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

package promqlref

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"

	"sigs.k8s.io/yaml"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// The files of examples/monitoring this package reads.
const (
	DashboardFile = "dashboard.json"
	RuleFile      = "prometheusrule.yaml"
)

// Expr is one PromQL expression of the examples, and where it is.
type Expr struct {
	Where string
	Expr  string
}

// dashboard is the part of a Grafana dashboard that holds queries.
type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// RuleGroups is a Prometheus rule file: the spec of a PrometheusRule.
type RuleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Record string `json:"record,omitempty"`
			Alert  string `json:"alert,omitempty"`
			Expr   string `json:"expr"`
		} `json:"rules"`
	} `json:"groups"`
}

// labelValues is Grafana's variable query label_values(metric, label).
var labelValues = regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)

// DashboardExprs returns every query of the dashboard in dir, its
// label_values variables as the selector metric{label=~".+"}.
func DashboardExprs(dir string) ([]Expr, error) {
	raw, err := os.ReadFile(filepath.Clean(filepath.Join(dir, DashboardFile)))
	if err != nil {
		return nil, errors.Wrap(err, "cannot read the dashboard")
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, errors.Wrap(err, "cannot decode the dashboard")
	}
	var out []Expr
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			out = append(out, Expr{Where: "panel " + p.Title + " query " + t.RefID, Expr: t.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			return nil, errors.Errorf("variable %s: cannot read query %q", v.Name, v.Definition)
		}
		out = append(out, Expr{Where: "variable " + v.Name, Expr: m[1] + `{` + m[2] + `=~".+"}`})
	}
	return out, nil
}

// Rules returns the rule groups of the PrometheusRule in dir.
func Rules(dir string) (RuleGroups, error) {
	raw, err := os.ReadFile(filepath.Clean(filepath.Join(dir, RuleFile)))
	if err != nil {
		return RuleGroups{}, errors.Wrap(err, "cannot read the PrometheusRule")
	}
	var pr struct {
		Kind string     `json:"kind"`
		Spec RuleGroups `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &pr); err != nil {
		return RuleGroups{}, errors.Wrap(err, "cannot decode the PrometheusRule")
	}
	if pr.Kind != "PrometheusRule" {
		return RuleGroups{}, errors.Errorf("%s holds a %q, want a PrometheusRule", RuleFile, pr.Kind)
	}
	return pr.Spec, nil
}

// RuleExprs returns every record's and alert's expression in dir's
// PrometheusRule.
func RuleExprs(dir string) ([]Expr, error) {
	rg, err := Rules(dir)
	if err != nil {
		return nil, err
	}
	var out []Expr
	for _, g := range rg.Groups {
		for _, r := range g.Rules {
			out = append(out, Expr{Where: "group " + g.Name + " rule " + r.Record + r.Alert, Expr: r.Expr})
		}
	}
	return out, nil
}

// RuleFileYAML returns dir's PrometheusRule's spec as a Prometheus rule
// file, every field kept, for promtool.
func RuleFileYAML(dir string) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Clean(filepath.Join(dir, RuleFile)))
	if err != nil {
		return nil, errors.Wrap(err, "cannot read the PrometheusRule")
	}
	var pr struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &pr); err != nil {
		return nil, errors.Wrap(err, "cannot decode the PrometheusRule")
	}
	out, err := yaml.Marshal(pr.Spec)
	return out, errors.Wrap(err, "cannot encode the rule file")
}
