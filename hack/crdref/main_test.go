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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.org
spec:
  group: example.org
  names:
    kind: Widget
    plural: widgets
    shortNames: [wd]
  scope: Namespaced
  versions:
  - name: v1
    additionalPrinterColumns:
    - jsonPath: .status.size
      name: SIZE
      type: integer
    schema:
      openAPIV3Schema:
        description: A Widget is a test kind.
        properties:
          spec:
            description: WidgetSpec is what the user wants.
            required: [size]
            properties:
              size:
                description: |-
                  Size of the widget
                  in bytes | blocks.
                type: integer
                minimum: 1
                maximum: 999999999
              mode:
                type: string
                default: fast
                enum: [fast, slow]
              disks:
                type: array
                items:
                  type: object
                  properties:
                    name:
                      type: string
          status:
            properties:
              size:
                type: integer
`

func TestGenerate(t *testing.T) {
	crds, out := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(crds, "example.org_widgets.yaml"), []byte(testCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(out, "gone.md")
	if err := os.WriteFile(stale, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := generate(crds, out); err != nil {
		t.Fatalf("generate: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a page without a CRD was left behind: stat %s: %v", stale, err)
	}
	page, err := os.ReadFile(filepath.Join(out, "widget.md"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		line   string
	}{
		"PrinterColumn": {reason: "kubectl's columns are listed", line: "| SIZE | `.status.size` | integer |"},
		"RequiredBounded": {
			reason: "a required field shows its joined description, escaped pipe and minimum",
			line:   "| `spec.size` | integer | yes |  | Size of the widget in bytes \\| blocks. Minimum 1. Maximum 999999999. |",
		},
		"DefaultEnum": {reason: "a default and an enum are shown", line: "| `spec.mode` | string |  | `\"fast\"` | One of `\"fast\"`, `\"slow\"`. |"},
		"ArrayItems":  {reason: "an array's item fields are named with []", line: "| `spec.disks[].name` | string |  |  |  |"},
		"Status":      {reason: "status fields are listed too", line: "| `status.size` | integer |  |  |  |"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(string(page), tc.line+"\n") {
				t.Errorf("%s: page lacks line %q:\n%s", tc.reason, tc.line, page)
			}
		})
	}
	index, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "| [Widget](widget.md) | `example.org/v1` | Namespaced | `wd` |"
	if !strings.Contains(string(index), want) {
		t.Errorf("index lacks %q:\n%s", want, index)
	}
	again := t.TempDir()
	if err := generate(crds, again); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(filepath.Join(again, "widget.md"))
	if diff := cmp.Diff(string(page), string(second)); diff != "" {
		t.Errorf("generate is not deterministic (-first +second):\n%s", diff)
	}
}
