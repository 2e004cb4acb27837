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
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// dashboard is the part of a Grafana dashboard's JSON model this renders.
type dashboard struct {
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type variable struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	AllValue string `json:"allValue"`
}

type panel struct {
	ID          int      `json:"id"`
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	GridPos     gridPos  `json:"gridPos"`
	Targets     []target `json:"targets"`
	FieldConfig struct {
		Defaults struct {
			Unit   string `json:"unit"`
			Custom struct {
				Stacking struct {
					Mode string `json:"mode"`
				} `json:"stacking"`
			} `json:"custom"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

// gridPos is Grafana's layout: 24 columns; h in rows of 30 pixels.
type gridPos struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"w"`
	H int `json:"h"`
}

type target struct {
	Expr         string `json:"expr"`
	LegendFormat string `json:"legendFormat"`
}

func (p panel) stacked() bool { return p.FieldConfig.Defaults.Custom.Stacking.Mode == "normal" }

func readDashboard(path string) (*dashboard, error) {
	raw, err := os.ReadFile(path) //nolint:gosec // the path is the caller's argument
	if err != nil {
		return nil, fmt.Errorf("cannot read the dashboard: %w", err)
	}
	d := &dashboard{}
	if err := json.Unmarshal(raw, d); err != nil {
		return nil, fmt.Errorf("cannot parse the dashboard %s: %w", path, err)
	}
	if len(d.Panels) == 0 {
		return nil, fmt.Errorf("the dashboard %s has no panels", path)
	}
	return d, nil
}

// grafanaInterval matches Grafana's interval variables, $x and ${x} alike.
var grafanaInterval = regexp.MustCompile(`\$\{?__(rate_interval|interval|range)\}?`)

// query turns a panel target's expression into PromQL: Grafana's interval
// variables become rateInterval (Grafana's $__rate_interval for the
// recording's scrape interval), and each template variable becomes its
// "All" value, as the dashboard opens by default.
func (d *dashboard) query(expr string, rateInterval time.Duration) string {
	expr = grafanaInterval.ReplaceAllString(expr, formatPromDuration(rateInterval))
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		all := v.AllValue
		if all == "" {
			all = ".*"
		}
		expr = strings.NewReplacer("${"+v.Name+"}", all, "$"+v.Name, all).Replace(expr)
	}
	return expr
}

// formatPromDuration writes d in whole seconds, which PromQL always accepts.
func formatPromDuration(d time.Duration) string {
	return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
}

// families lists the metric families the dashboard's queries select (a
// histogram's family for a _bucket, _sum or _count series), by parsing
// each query with Prometheus's parser.
func (d *dashboard) families() (map[string]bool, error) {
	out := map[string]bool{}
	p := parser.NewParser(parser.Options{})
	for _, pn := range d.Panels {
		for _, t := range pn.Targets {
			expr, err := p.ParseExpr(d.query(t.Expr, time.Minute))
			if err != nil {
				return nil, fmt.Errorf("panel %q: cannot parse %q: %w", pn.Title, t.Expr, err)
			}
			for _, sel := range parser.ExtractSelectors(expr) {
				for _, m := range sel {
					if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
						out[familyOf(m.Value)] = true
					}
				}
			}
		}
	}
	return out, nil
}

// familyOf names the family a sample's metric belongs to: a histogram's or
// summary's series carry a suffix the family's name does not.
func familyOf(metric string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(metric, suffix); ok {
			return base
		}
	}
	return metric
}

// legendTemplate matches Grafana's {{label}} placeholders.
var legendTemplate = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// legend names a series as Grafana does: the target's legend format with
// its labels filled in, else the series' labels.
func legend(format string, l labels.Labels) string {
	if format == "" {
		return l.String()
	}
	return strings.TrimSpace(legendTemplate.ReplaceAllStringFunc(format, func(m string) string {
		return l.Get(legendTemplate.FindStringSubmatch(m)[1])
	}))
}
