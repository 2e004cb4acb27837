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
	"image/color"
	"image/draw"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// Grafana's dark theme.
var (
	background = color.RGBA{0x11, 0x12, 0x17, 0xff}
	panelFill  = color.RGBA{0x18, 0x1b, 0x1f, 0xff}
	panelEdge  = color.RGBA{0x2b, 0x2d, 0x33, 0xff}
	gridLine   = color.RGBA{0x24, 0x27, 0x2c, 0xff}
	titleText  = color.RGBA{0xcc, 0xcc, 0xdc, 0xff}
	axisText   = color.RGBA{0x9f, 0xa0, 0xa8, 0xff}
	// palette is Grafana's classic series palette.
	palette = []color.RGBA{
		{0x73, 0xbf, 0x69, 0xff}, {0xf2, 0xcc, 0x0c, 0xff}, {0x8a, 0xb8, 0xff, 0xff}, {0xff, 0x78, 0x0a, 0xff},
		{0xf2, 0x49, 0x5c, 0xff}, {0x57, 0x94, 0xf2, 0xff}, {0xb8, 0x77, 0xd9, 0xff}, {0x70, 0x5d, 0xa0, 0xff},
		{0x37, 0x87, 0x2d, 0xff}, {0xfa, 0xde, 0x2a, 0xff}, {0x44, 0x7e, 0xbc, 0xff}, {0xc1, 0x5c, 0x17, 0xff},
		{0x89, 0x0f, 0x02, 0xff}, {0x0a, 0x43, 0x7c, 0xff}, {0x6d, 0x1f, 0x62, 0xff}, {0x58, 0x44, 0x77, 0xff},
	}
)

// canvas is the image being drawn and its typefaces.
type canvas struct {
	img            *image.RGBA
	text, small    font.Face
	title, heading font.Face
	raster         *vector.Rasterizer
	origin         pt
}

func newCanvas(w, h int) (*canvas, error) {
	regular, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("cannot read the Go font: %w", err)
	}
	bold, err := opentype.Parse(gobold.TTF)
	if err != nil {
		return nil, fmt.Errorf("cannot read the Go bold font: %w", err)
	}
	face := func(f *opentype.Font, size float64) (font.Face, error) {
		return opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	}
	c := &canvas{img: image.NewRGBA(image.Rect(0, 0, w, h)), raster: vector.NewRasterizer(w, h)}
	if c.text, err = face(regular, 11); err != nil {
		return nil, err
	}
	if c.small, err = face(regular, 9); err != nil {
		return nil, err
	}
	if c.title, err = face(bold, 13); err != nil {
		return nil, err
	}
	if c.heading, err = face(bold, 18); err != nil {
		return nil, err
	}
	draw.Draw(c.img, c.img.Bounds(), image.NewUniform(background), image.Point{}, draw.Src)
	return c, nil
}

func (c *canvas) fill(r image.Rectangle, col color.Color) {
	draw.Draw(c.img, r, image.NewUniform(col), image.Point{}, draw.Over)
}

// outline draws r's one-pixel border.
func (c *canvas) outline(r image.Rectangle, col color.Color) {
	c.fill(image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), col)
	c.fill(image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y), col)
	c.fill(image.Rect(r.Min.X, r.Min.Y, r.Min.X+1, r.Max.Y), col)
	c.fill(image.Rect(r.Max.X-1, r.Min.Y, r.Max.X, r.Max.Y), col)
}

// write draws s with its top-left corner at (x, y).
func (c *canvas) write(f font.Face, x, y int, s string, col color.Color) {
	ascent := f.Metrics().Ascent.Ceil()
	d := &font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: f, Dot: fixed.P(x, y+ascent)}
	d.DrawString(s)
}

func measure(f font.Face, s string) int { return font.MeasureString(f, s).Ceil() }

// fit shortens s until it is at most w pixels wide, cutting its middle:
// a series' name starts with what it is about (a kind, a connection) and
// ends with what distinguishes it (exists, ready, a status code).
func fit(f font.Face, s string, w int) string {
	if measure(f, s) <= w {
		return s
	}
	r := []rune(s)
	head, tail := len(r)/2, len(r)/2
	for head > 0 && measure(f, string(r[:head])+"…"+string(r[len(r)-tail:])) > w {
		// Cut from the longer side, the head first.
		if head >= tail {
			head--
		} else {
			tail--
		}
	}
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

type pt struct{ x, y float64 }

// polyline strokes the points with an anti-aliased line of the given
// width, clipped to clip: each segment is filled as a thin quadrilateral.
func (c *canvas) polyline(pts []pt, width float64, col color.Color, clip image.Rectangle) {
	if len(pts) == 0 {
		return
	}
	c.begin(clip)
	half := width / 2
	if len(pts) == 1 {
		// A lone point (a series with one sample in the window) is a dot.
		p := pts[0]
		c.quad(pt{p.x - half - 0.5, p.y - half - 0.5}, pt{p.x + half + 0.5, p.y - half - 0.5},
			pt{p.x + half + 0.5, p.y + half + 0.5}, pt{p.x - half - 0.5, p.y + half + 0.5})
	}
	for i := 1; i < len(pts); i++ {
		a, z := pts[i-1], pts[i]
		dx, dy := z.x-a.x, z.y-a.y
		l := math.Hypot(dx, dy)
		if l == 0 {
			continue
		}
		// The segment's normal, and half a width of extension past each end
		// so consecutive segments overlap at their joints.
		nx, ny := -dy/l*half, dx/l*half
		ex, ey := dx/l*half*0.5, dy/l*half*0.5
		c.quad(pt{a.x - ex + nx, a.y - ey + ny}, pt{z.x + ex + nx, z.y + ey + ny},
			pt{z.x + ex - nx, z.y + ey - ny}, pt{a.x - ex - nx, a.y - ey - ny})
	}
	c.raster.Draw(c.img, clip, image.NewUniform(col), image.Point{})
}

// begin starts a path drawn into clip; the rasterizer's origin is clip's
// top-left corner, so moveTo and lineTo shift the points by it.
func (c *canvas) begin(clip image.Rectangle) {
	c.raster.Reset(clip.Dx(), clip.Dy())
	c.origin = pt{float64(clip.Min.X), float64(clip.Min.Y)}
}

func (c *canvas) moveTo(p pt) { c.raster.MoveTo(float32(p.x-c.origin.x), float32(p.y-c.origin.y)) }
func (c *canvas) lineTo(p pt) { c.raster.LineTo(float32(p.x-c.origin.x), float32(p.y-c.origin.y)) }

func (c *canvas) quad(a, b, d, e pt) {
	c.moveTo(a)
	c.lineTo(b)
	c.lineTo(d)
	c.lineTo(e)
	c.raster.ClosePath()
}

// faded is col at a fraction of its opacity (premultiplied).
func faded(col color.RGBA, alpha float64) color.RGBA {
	f := func(v uint8) uint8 { return uint8(float64(v) * alpha) }
	return color.RGBA{f(col.R), f(col.G), f(col.B), f(col.A)}
}
