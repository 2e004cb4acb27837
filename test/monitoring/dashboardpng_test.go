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

package monitoring

import (
	"bufio"
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recording is /metrics as the provider served it during
// cluster/local/dashboard-png.sh's run of the demo (FIXTURE=1 rewrites
// it), kept to the families the dashboard queries.
const recording = "testdata/recording.txt.gz"

// The renderer's layout: 24 columns of width/24 pixels, rows of half a
// column, below a 48-pixel header, with an 8-pixel margin at the bottom.
const (
	renderWidth = 1440
	headerH     = 48
	bottomPad   = 8
)

// panelSummary is the line dashboardpng render prints per panel.
type panelSummary struct {
	ID      int    `json:"id"`
	Title   string `json:"title"`
	Series  int    `json:"series"`
	Samples int    `json:"samples"`
}

type dashboardPanel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos struct {
		Y int `json:"y"`
		H int `json:"h"`
	} `json:"gridPos"`
}

// TestDashboardRendersFromARecording: the renderer evaluates every panel's
// queries over a recording of the provider's /metrics, every panel gets
// data, and the PNG is the dashboard's grid at the requested width.
func TestDashboardRendersFromARecording(t *testing.T) {
	bin := monitoringTool(t, "dashboardpng")
	panels := readPanels(t)
	out := filepath.Join(t.TempDir(), "dashboard.png")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "render", "--dashboard", filepath.Join(examples, "dashboard.json"),
		"--recording", recording, "--out", out, "--width", strconv.Itoa(renderWidth))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dashboardpng render: %v\n%s", err, stderr.String())
	}

	got := map[int]string{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var s panelSummary
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("summary line %q: %v", sc.Text(), err)
		}
		got[s.ID] = s.Title
		if s.Series == 0 || s.Samples == 0 {
			t.Errorf("panel %d %q got %d series and %d samples from the recording, want some", s.ID, s.Title, s.Series, s.Samples)
		}
	}
	want := map[int]string{}
	bottom := 0
	for _, p := range panels {
		bottom = max(bottom, p.GridPos.Y+p.GridPos.H)
		if p.Type != "row" {
			want[p.ID] = p.Title
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("every panel but the rows is summarised once: -want, +got:\n%s", diff)
	}

	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the output is not a PNG: %v", err)
	}
	wantSize := image.Point{renderWidth, headerH + bottom*renderWidth/48 + bottomPad}
	if diff := cmp.Diff(wantSize, img.Bounds().Size()); diff != "" {
		t.Errorf("the PNG's size is the dashboard's grid: -want, +got:\n%s", diff)
	}
}

func readPanels(t *testing.T) []dashboardPanel {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(examples, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []dashboardPanel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d.Panels
}
