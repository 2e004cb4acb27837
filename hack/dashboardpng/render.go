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
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
)

// headerH is the band above the panels with the dashboard's title and the
// window it shows.
const headerH = 48

// summary is the line render prints for each panel.
type summary struct {
	ID      int    `json:"id"`
	Title   string `json:"title"`
	Type    string `json:"type"`
	Series  int    `json:"series"`
	Samples int    `json:"samples"`
}

// render draws d over the recording into a PNG at out, width pixels wide,
// and writes a summary line per panel to report.
func render(ctx context.Context, d *dashboard, scrapes []scrape, out string, width int, report io.Writer) error {
	s, err := load(ctx, scrapes)
	if err != nil {
		return err
	}
	defer s.close()
	w := windowOf(scrapes)
	ev := newEvaluator(d, s.db, w)
	colW := width / 24
	rowH := colW / 2
	bottom := 0
	for _, p := range d.Panels {
		bottom = max(bottom, p.GridPos.Y+p.GridPos.H)
	}
	c, err := newCanvas(colW*24, headerH+bottom*rowH+pad)
	if err != nil {
		return err
	}
	c.drawHeader(d, w, len(scrapes))
	enc := json.NewEncoder(report)
	for _, p := range d.Panels {
		g := p.GridPos
		r := image.Rect(g.X*colW+4, headerH+g.Y*rowH+4, (g.X+g.W)*colW-4, headerH+(g.Y+g.H)*rowH-4)
		if p.Type == "row" {
			c.drawRow(r, p.Title)
			continue
		}
		data, err := ev.panel(ctx, p)
		if err != nil {
			return err
		}
		if p.Type == "bargauge" {
			c.drawBarGauge(r, data)
		} else {
			c.drawTimeSeries(r, data, w)
		}
		if err := enc.Encode(summary{ID: p.ID, Title: p.Title, Type: p.Type, Series: len(data.series), Samples: data.samples()}); err != nil {
			return fmt.Errorf("cannot write the summary: %w", err)
		}
	}
	return writePNG(c.img, out)
}

func (c *canvas) drawHeader(d *dashboard, w window, scrapes int) {
	c.write(c.heading, pad+4, 8, d.Title, titleText)
	sub := fmt.Sprintf("%s to %s UTC · %d scrapes of the provider's /metrics · $connection = All · $__rate_interval = %s",
		w.start.UTC().Format("2006-01-02 15:04:05"), w.end.UTC().Format("15:04:05"), scrapes, formatPromDuration(w.rateInterval))
	c.write(c.text, pad+4, 31, sub, axisText)
}

func writePNG(img image.Image, out string) error {
	f, err := os.Create(out) //nolint:gosec // the caller's path
	if err != nil {
		return fmt.Errorf("cannot create %s: %w", out, err)
	}
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(f, img); err != nil {
		_ = f.Close()
		return fmt.Errorf("cannot encode %s: %w", out, err)
	}
	return f.Close()
}
