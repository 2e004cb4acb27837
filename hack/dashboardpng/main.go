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

// Command dashboardpng renders examples/monitoring/dashboard.json to a PNG
// from the provider's own /metrics: `record` scrapes a running provider
// into a recording (the text exposition of each scrape, kept to the metric
// families the dashboard queries), and `render` loads a recording into a
// Prometheus TSDB, evaluates every panel's PromQL with Prometheus's own
// engine, and draws the panels where the dashboard's grid puts them.
//
// It is a module of its own: Prometheus's Go module requires newer
// Kubernetes modules than crossplane-runtime's release, so it must not
// enter the provider's go.mod. cluster/local/build-tools.sh monitoring
// builds it; cluster/local/dashboard-png.sh runs it over the demo.
//
//	dashboardpng record --url URL --dashboard FILE --out FILE [--every 10s]
//	dashboardpng render --dashboard FILE --recording FILE --out FILE.png
//
// render prints one JSON line per panel (id, title, type, series, samples)
// so a test can check that every panel had data.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: dashboardpng record|render [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "record":
		err = recordCommand(os.Args[2:])
	case "render":
		err = renderCommand(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (record, render)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dashboardpng:", err)
		os.Exit(1)
	}
}

func recordCommand(args []string) error {
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	url := fs.String("url", "", "the provider's metrics URL, e.g. http://127.0.0.1:18080/metrics")
	dash := fs.String("dashboard", "", "the dashboard JSON whose metrics to keep")
	out := fs.String("out", "", "the recording to write; each scrape is appended as it is taken")
	every := fs.Duration("every", 10*time.Second, "time between scrapes")
	total := fs.Duration("for", 0, "stop after this long (0: until SIGTERM or SIGINT)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" || *dash == "" || *out == "" {
		return fmt.Errorf("record needs --url, --dashboard and --out")
	}
	d, err := readDashboard(*dash)
	if err != nil {
		return err
	}
	keep, err := d.families()
	if err != nil {
		return err
	}
	// A signal ends the recording between scrapes: every scrape written is whole.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if *total > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *total)
		defer cancel()
	}
	return record(ctx, recorder{url: *url, out: *out, every: *every, keep: keep})
}

func renderCommand(args []string) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	dash := fs.String("dashboard", "", "the dashboard JSON")
	rec := fs.String("recording", "", "a recording written by record (gzip-compressed when it ends in .gz)")
	out := fs.String("out", "", "the PNG to write")
	width := fs.Int("width", 1440, "image width in pixels (the dashboard's 24 columns share it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dash == "" || *rec == "" || *out == "" {
		return fmt.Errorf("render needs --dashboard, --recording and --out")
	}
	d, err := readDashboard(*dash)
	if err != nil {
		return err
	}
	scrapes, err := readRecording(*rec)
	if err != nil {
		return err
	}
	return render(context.Background(), d, scrapes, *out, *width, os.Stdout)
}
