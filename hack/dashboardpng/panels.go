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
	"fmt"
	"image"
	"math"
	"time"
)

const (
	pad       = 8
	titleH    = 28
	legendRow = 15
)

// drawRow draws a row panel: its title across the dashboard, as Grafana
// shows an expanded row.
func (c *canvas) drawRow(r image.Rectangle, title string) {
	c.write(c.title, r.Min.X+pad, r.Min.Y+(r.Dy()-14)/2, title, titleText)
}

// drawFrame draws a panel's box and title and returns the rectangle left
// for its content.
func (c *canvas) drawFrame(r image.Rectangle, title string) image.Rectangle {
	c.fill(r, panelFill)
	c.outline(r, panelEdge)
	c.write(c.title, r.Min.X+pad, r.Min.Y+7, fit(c.title, title, r.Dx()-2*pad), titleText)
	return image.Rect(r.Min.X+pad, r.Min.Y+titleH, r.Max.X-pad, r.Max.Y-pad)
}

func (c *canvas) noData(r image.Rectangle) {
	msg := "No data"
	c.write(c.text, r.Min.X+(r.Dx()-measure(c.text, msg))/2, r.Min.Y+r.Dy()/2-6, msg, axisText)
}

// drawTimeSeries draws a time series panel: lines over the window, y axis
// in the panel's unit, stacked when the panel stacks, the legend as a
// table on the right (the dashboard's legend placement).
func (c *canvas) drawTimeSeries(r image.Rectangle, d panelData, w window) {
	content := c.drawFrame(r, d.panel.Title)
	if d.samples() == 0 {
		c.noData(content)
		return
	}
	legendW := content.Dx() * 2 / 5
	values := aligned(d.series, w, d.panel.stacked())
	a := c.drawAxes(image.Rect(content.Min.X, content.Min.Y, content.Max.X-legendW-pad, content.Max.Y),
		values, d.panel.FieldConfig.Defaults.Unit, w)
	lineClip := a.plot.Inset(-2)
	for i, vs := range values {
		for _, run := range runs(vs) {
			pts := make([]pt, 0, len(run))
			for _, k := range run {
				pts = append(pts, pt{a.x(w.start.Add(time.Duration(k) * w.step)), a.y(vs[k])})
			}
			c.polyline(pts, 1.5, palette[i%len(palette)], lineClip)
		}
	}
	c.drawLegend(image.Rect(content.Max.X-legendW, content.Min.Y, content.Max.X, content.Max.Y), d.series)
}

// axes maps a graph's times and values to pixels of its plot.
type axes struct {
	plot     image.Rectangle
	from, to float64
	w        window
}

func (a axes) y(v float64) float64 {
	return float64(a.plot.Max.Y) - (v-a.from)/(a.to-a.from)*float64(a.plot.Dy())
}

func (a axes) x(t time.Time) float64 {
	return float64(a.plot.Min.X) + float64(t.Sub(a.w.start))/float64(a.w.end.Sub(a.w.start))*float64(a.plot.Dx())
}

// drawAxes draws the grid and the labels of a graph in area: a y axis from
// 0 (or below, for negative values) to above the largest value in unit,
// and the window's times.
func (c *canvas) drawAxes(area image.Rectangle, values [][]float64, unit string, w window) axes {
	lo, hi := 0.0, math.Inf(-1)
	for _, vs := range values {
		for _, v := range vs {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	ticks, from, to := niceTicks(lo, hi, 4, unit)
	labelW := 0
	for _, t := range ticks {
		labelW = max(labelW, measure(c.text, formatValue(t, unit)))
	}
	a := axes{plot: image.Rect(area.Min.X+labelW+6, area.Min.Y+6, area.Max.X, area.Max.Y-16), from: from, to: to, w: w}
	for _, t := range ticks {
		yy := int(math.Round(a.y(t)))
		c.fill(image.Rect(a.plot.Min.X, yy, a.plot.Max.X, yy+1), gridLine)
		label := formatValue(t, unit)
		c.write(c.text, a.plot.Min.X-6-measure(c.text, label), yy-7, label, axisText)
	}
	times, layout := timeTicks(w.start, w.end, max(2, a.plot.Dx()/70))
	for _, t := range times {
		xx := int(math.Round(a.x(t)))
		c.fill(image.Rect(xx, a.plot.Min.Y, xx+1, a.plot.Max.Y), gridLine)
		label := t.UTC().Format(layout)
		c.write(c.text, xx-measure(c.text, label)/2, a.plot.Max.Y+3, label, axisText)
	}
	return a
}

// aligned puts each series' values on the window's steps (NaN where the
// query returned none); stacked, each series is added onto the ones
// before it, as Grafana's normal stacking does.
func aligned(ss []series, w window, stacked bool) [][]float64 {
	n := int(w.end.Sub(w.start)/w.step) + 1
	out := make([][]float64, len(ss))
	sum := make([]float64, n)
	for i, s := range ss {
		vs := make([]float64, n)
		for k := range vs {
			vs[k] = math.NaN()
		}
		for _, p := range s.points {
			k := int(time.UnixMilli(p.T).Sub(w.start) / w.step)
			if k < 0 || k >= n || math.IsNaN(p.F) {
				continue
			}
			vs[k] = p.F
			if stacked {
				sum[k] += p.F
				vs[k] = sum[k]
			}
		}
		out[i] = vs
	}
	return out
}

// runs splits the indexes of vs into runs without NaN: a line is not
// drawn across a gap.
func runs(vs []float64) [][]int {
	var out [][]int
	var cur []int
	for k, v := range vs {
		if math.IsNaN(v) {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, k)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// drawLegend lists the series' names with their colours, as many as fit;
// the last line says how many more there are.
func (c *canvas) drawLegend(r image.Rectangle, ss []series) {
	rows := max(1, r.Dy()/legendRow)
	for i, s := range ss {
		yy := r.Min.Y + i*legendRow
		if i == rows-1 && len(ss) > rows {
			c.write(c.text, r.Min.X+16, yy, fmt.Sprintf("+ %d more series", len(ss)-i), axisText)
			return
		}
		col := palette[i%len(palette)]
		c.fill(image.Rect(r.Min.X, yy+6, r.Min.X+12, yy+8), col)
		c.write(c.text, r.Min.X+16, yy, fit(c.text, s.name, r.Dx()-16), titleText)
	}
}

// drawBarGauge draws a horizontal bar gauge: a bar per series, as long as
// its value against the largest, with the series' name and value.
func (c *canvas) drawBarGauge(r image.Rectangle, d panelData) {
	content := c.drawFrame(r, d.panel.Title)
	if d.samples() == 0 {
		c.noData(content)
		return
	}
	unit := d.panel.FieldConfig.Defaults.Unit
	top := 0.0
	for _, s := range d.series {
		top = math.Max(top, s.points[0].F)
	}
	if top <= 0 {
		top = 1
	}
	rowH := max(4, min(22, content.Dy()/len(d.series)))
	// Many bars: a smaller face, as Grafana shrinks a bar gauge's text.
	face, textH := c.text, 13
	if rowH < 14 {
		face, textH = c.small, 10
	}
	nameW := content.Dx() * 9 / 20
	valueW := 40
	barW := content.Dx() - nameW - valueW - 2*pad
	for i, s := range d.series {
		yy := content.Min.Y + i*rowH
		if yy+rowH > content.Max.Y {
			break
		}
		v := s.points[0].F
		col := palette[0]
		if rowH >= textH-1 {
			c.write(face, content.Min.X, yy+(rowH-textH)/2, fit(face, s.name, nameW-pad), titleText)
		}
		bx := content.Min.X + nameW
		c.fill(image.Rect(bx, yy+1, bx+barW, yy+rowH-1), gridLine)
		c.fill(image.Rect(bx, yy+1, bx+int(float64(barW)*v/top), yy+rowH-1), faded(col, 0.85))
		if rowH >= textH-1 {
			c.write(face, bx+barW+pad, yy+(rowH-textH)/2, formatValue(v, unit), col)
		}
	}
}
