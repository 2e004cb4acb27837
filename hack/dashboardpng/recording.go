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
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// A recording is the provider's /metrics text, scrape after scrape, each
// introduced by a comment line with the scrape's time in Unix
// milliseconds. The text format reads any other "# " line as a comment, so
// every scrape stays what the provider served.
const scrapeHeader = "# dashboardpng scrape at "

// scrape is one /metrics response and when it was taken.
type scrape struct {
	at   time.Time
	text []byte
}

type recorder struct {
	url   string
	out   string
	every time.Duration
	keep  map[string]bool
}

// record scrapes r.url every r.every until ctx ends, appending each scrape
// to r.out. A failed scrape is reported and skipped, as Prometheus would.
func record(ctx context.Context, r recorder) error {
	f, err := os.OpenFile(r.out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644) //nolint:gosec // the caller's path
	if err != nil {
		return fmt.Errorf("cannot create the recording: %w", err)
	}
	defer f.Close()
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	for n := 0; ; {
		body, err := get(ctx, r.url)
		switch {
		case ctx.Err() != nil:
			fmt.Fprintf(os.Stderr, "dashboardpng: recorded %d scrapes\n", n)
			return nil
		case err != nil:
			fmt.Fprintln(os.Stderr, "dashboardpng: scrape failed:", err)
		default:
			if _, err := f.Write(append([]byte(scrapeHeader+strconv.FormatInt(time.Now().UnixMilli(), 10)+"\n"), keepFamilies(body, r.keep)...)); err != nil {
				return fmt.Errorf("cannot write the recording: %w", err)
			}
			n++
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

func get(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return nil, err
	}
	// The plain text format: one line per sample, which keepFamilies filters.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// keepFamilies keeps the lines of the text exposition that belong to the
// families in keep (their HELP, TYPE and samples), unchanged: the rest of
// /metrics (Go runtime, work queues, ...) would only make the recording
// larger.
func keepFamilies(text []byte, keep map[string]bool) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(text) {
		name := metricOfLine(string(line))
		if name != "" && (keep[name] || keep[familyOf(name)]) {
			out.Write(line)
		}
	}
	return out.Bytes()
}

// metricOfLine names the metric a text exposition line is about: the
// family of a HELP or TYPE line, the series' metric of a sample line; ""
// for any other comment.
func metricOfLine(line string) string {
	if rest, ok := strings.CutPrefix(line, "# "); ok {
		kind, rest, _ := strings.Cut(rest, " ")
		if kind != "HELP" && kind != "TYPE" {
			return ""
		}
		name, _, _ := strings.Cut(rest, " ")
		return name
	}
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return ""
	}
	return line[:end]
}

// readRecording reads a recording record wrote, gzip-compressed when its
// name ends in .gz.
func readRecording(path string) ([]scrape, error) {
	f, err := os.Open(path) //nolint:gosec // the caller's path
	if err != nil {
		return nil, fmt.Errorf("cannot open the recording: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("cannot read the recording %s: %w", path, err)
		}
		r = gz
	}
	scrapes, err := parseRecording(r)
	if err != nil {
		return nil, fmt.Errorf("cannot read the recording %s: %w", path, err)
	}
	if len(scrapes) < 2 {
		return nil, fmt.Errorf("the recording %s holds %d scrapes: a graph needs at least 2", path, len(scrapes))
	}
	return scrapes, nil
}

func parseRecording(r io.Reader) ([]scrape, error) {
	var out []scrape
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if ms, ok := strings.CutPrefix(line, scrapeHeader); ok {
			t, err := strconv.ParseInt(ms, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("bad scrape time %q: %w", ms, err)
			}
			out = append(out, scrape{at: time.UnixMilli(t)})
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("text before the first %q line", scrapeHeader)
		}
		last := &out[len(out)-1]
		last.text = append(append(last.text, line...), '\n')
	}
	return out, sc.Err()
}
