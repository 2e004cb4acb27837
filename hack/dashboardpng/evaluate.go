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
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
)

// window is the time range a render shows and Grafana's variables for it.
type window struct {
	start, end time.Time
	// step is Grafana's $__interval: the range over about maxDataPoints.
	step time.Duration
	// rateInterval is Grafana's $__rate_interval: max($__interval + the
	// scrape interval, 4 × the scrape interval).
	rateInterval time.Duration
}

// maxDataPoints is about how many points a panel's graph has across.
const maxDataPoints = 240

func windowOf(scrapes []scrape) window {
	w := window{start: scrapes[0].at, end: scrapes[len(scrapes)-1].at}
	w.step = max(time.Second, w.end.Sub(w.start)/maxDataPoints).Round(time.Second)
	scrape := scrapeInterval(scrapes)
	w.rateInterval = max(w.step+scrape, 4*scrape)
	return w
}

// series is one line of a graph, or one bar of a bar gauge (one point).
type series struct {
	name   string
	points []promql.FPoint
}

// panelData is what a panel's queries returned.
type panelData struct {
	panel  panel
	series []series
}

// samples counts the values the panel shows.
func (d panelData) samples() int {
	n := 0
	for _, s := range d.series {
		for _, p := range s.points {
			if !math.IsNaN(p.F) {
				n++
			}
		}
	}
	return n
}

// evaluator runs a dashboard's queries over a store with Prometheus's
// engine.
type evaluator struct {
	engine *promql.Engine
	store  storage.Queryable
	dash   *dashboard
	w      window
}

func newEvaluator(dash *dashboard, store storage.Queryable, w window) *evaluator {
	return &evaluator{
		engine: promql.NewEngine(promql.EngineOpts{
			MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute,
			Parser: parser.NewParser(parser.Options{}),
		}),
		store: store, dash: dash, w: w,
	}
}

// panel evaluates p's targets: a bar gauge at the window's end (its bars
// show the current value), any other panel over the whole window.
func (e *evaluator) panel(ctx context.Context, p panel) (panelData, error) {
	out := panelData{panel: p}
	for _, t := range p.Targets {
		q := e.dash.query(t.Expr, e.w.rateInterval)
		var s []series
		var err error
		if p.Type == "bargauge" || p.Type == "stat" || p.Type == "gauge" {
			s, err = e.instant(ctx, q, t.LegendFormat)
		} else {
			s, err = e.rangeQuery(ctx, q, t.LegendFormat)
		}
		if err != nil {
			return out, fmt.Errorf("panel %q: %w", p.Title, err)
		}
		out.series = append(out.series, s...)
	}
	return out, nil
}

func (e *evaluator) rangeQuery(ctx context.Context, q, format string) ([]series, error) {
	qry, err := e.engine.NewRangeQuery(ctx, e.store, nil, q, e.w.start, e.w.end, e.w.step)
	if err != nil {
		return nil, fmt.Errorf("cannot query %q: %w", q, err)
	}
	defer qry.Close()
	res := qry.Exec(ctx)
	if res.Err != nil {
		return nil, fmt.Errorf("cannot evaluate %q: %w", q, res.Err)
	}
	m, err := res.Matrix()
	if err != nil {
		return nil, fmt.Errorf("%q: %w", q, err)
	}
	out := make([]series, 0, len(m))
	for _, s := range m {
		// Closing the query returns its point slices to the engine's pool:
		// keep copies.
		out = append(out, series{name: legend(format, s.Metric), points: slices.Clone(s.Floats)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func (e *evaluator) instant(ctx context.Context, q, format string) ([]series, error) {
	qry, err := e.engine.NewInstantQuery(ctx, e.store, nil, q, e.w.end)
	if err != nil {
		return nil, fmt.Errorf("cannot query %q: %w", q, err)
	}
	defer qry.Close()
	res := qry.Exec(ctx)
	if res.Err != nil {
		return nil, fmt.Errorf("cannot evaluate %q: %w", q, res.Err)
	}
	v, err := res.Vector()
	if err != nil {
		return nil, fmt.Errorf("%q: %w", q, err)
	}
	out := make([]series, 0, len(v))
	for _, s := range v {
		out = append(out, series{name: legend(format, s.Metric), points: []promql.FPoint{{T: s.T, F: s.F}}})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}
