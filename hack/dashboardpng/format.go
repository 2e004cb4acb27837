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
	"math"
	"strconv"
	"strings"
	"time"
)

// formatValue writes v in the panel's Grafana unit, as its axis and legend
// show it.
func formatValue(v float64, unit string) string {
	switch unit {
	case "s":
		return formatSeconds(v)
	case "d":
		return number(v) + " day"
	case "ops":
		return number(v) + " ops/s"
	case "reqps":
		return number(v) + " req/s"
	default:
		return short(v)
	}
}

// formatSeconds writes a duration in the largest unit under it, ms to days.
func formatSeconds(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0 s"
	case a < 1:
		return number(v*1000) + " ms"
	case a < 60:
		return number(v) + " s"
	case a < 3600:
		return number(v/60) + " min"
	case a < 86400:
		return number(v/3600) + " hour"
	default:
		return number(v/86400) + " day"
	}
}

// short is Grafana's "short" unit: K, Mil, Bil suffixes.
func short(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return number(v/1e9) + " Bil"
	case a >= 1e6:
		return number(v/1e6) + " Mil"
	case a >= 1e3:
		return number(v/1e3) + " K"
	default:
		return number(v)
	}
}

// number writes v with up to two decimals, trailing zeros dropped.
func number(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// secondSteps are round durations, in seconds, for an axis in seconds
// above a second.
var secondSteps = []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400}

// niceTicks returns about n round values spanning [lo, hi], and the
// range they cover, for a y axis in unit: round durations for seconds.
func niceTicks(lo, hi float64, n int, unit string) (ticks []float64, from, to float64) {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if unit == "s" && raw > 1 {
		for _, s := range secondSteps {
			if step = s; s >= raw {
				break
			}
		}
	}
	from = math.Floor(lo/step) * step
	to = math.Ceil(hi/step) * step
	for v := from; v <= to+step/2; v += step {
		ticks = append(ticks, v)
	}
	return ticks, from, to
}

// timeTicks returns the round minutes (or seconds) between start and end
// to label an x axis with about n labels, and the layout to write them
// in: with seconds when they are less than a minute apart.
func timeTicks(start, end time.Time, n int) ([]time.Time, string) {
	span := end.Sub(start)
	step := time.Minute
	for _, s := range []time.Duration{10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute,
		2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour} {
		step = s
		if span/s <= time.Duration(n) {
			break
		}
	}
	var out []time.Time
	for t := start.Truncate(step); !t.After(end); t = t.Add(step) {
		if !t.Before(start) {
			out = append(out, t)
		}
	}
	if step < time.Minute {
		return out, "15:04:05"
	}
	return out, "15:04"
}
