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

// Package metricstest reads metrics the way tests check them: from a
// registry in the test process, or scraped over HTTP from a running
// provider, as flat samples.
package metricstest

import (
	"context"
	"net/http"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// A Sample is one value: a counter's or a gauge's, or a histogram's count
// (Name then ends in _count) or sum (_sum).
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// String renders s like the exposition format, labels sorted.
func (s Sample) String() string {
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+`"`+s.Labels[k]+`"`)
	}
	return s.Name + "{" + strings.Join(parts, ",") + "}"
}

// Samples is a scrape.
type Samples []Sample

// Gather reads every sample g holds.
func Gather(g prometheus.Gatherer) (Samples, error) {
	families, err := g.Gather()
	if err != nil {
		return nil, errors.Wrap(err, "cannot gather metrics")
	}
	return flatten(families), nil
}

// Scrape reads every sample a /metrics endpoint serves, in the text format.
func Scrape(ctx context.Context, url string) (Samples, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return nil, errors.Wrap(err, "cannot build the scrape request")
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot scrape %s", url)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, errors.Errorf("scraping %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	byName, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot parse the metrics of %s", url)
	}
	families := make([]*dto.MetricFamily, 0, len(byName))
	for _, f := range byName {
		families = append(families, f)
	}
	return flatten(families), nil
}

func flatten(families []*dto.MetricFamily) Samples {
	var out Samples
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.GetCounter() != nil:
				out = append(out, Sample{Name: f.GetName(), Labels: labels, Value: m.GetCounter().GetValue()})
			case m.GetGauge() != nil:
				out = append(out, Sample{Name: f.GetName(), Labels: labels, Value: m.GetGauge().GetValue()})
			case m.GetHistogram() != nil:
				h := m.GetHistogram()
				out = append(out,
					Sample{Name: f.GetName() + "_count", Labels: labels, Value: float64(h.GetSampleCount())},
					Sample{Name: f.GetName() + "_sum", Labels: labels, Value: h.GetSampleSum()})
			}
		}
	}
	return out
}

// Sum adds the values of the samples named name whose labels include
// every one of match, and says whether there was any.
func (s Samples) Sum(name string, match map[string]string) (float64, bool) {
	var sum float64
	found := false
	for _, smp := range s.Select(name, match) {
		sum += smp.Value
		found = true
	}
	return sum, found
}

// Has reports whether exactly one sample is named name with labels
// including match, and it has value want.
func (s Samples) Has(name string, match map[string]string, want float64) bool {
	got := s.Select(name, match)
	return len(got) == 1 && got[0].Value == want
}

// Select returns the samples named name whose labels include every one of
// match.
func (s Samples) Select(name string, match map[string]string) Samples {
	var out Samples
	for _, smp := range s {
		if smp.Name == name && includes(smp.Labels, match) {
			out = append(out, smp)
		}
	}
	return out
}

func includes(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}
