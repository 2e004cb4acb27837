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

package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// internalKinds are CRDs users never write: no page of their own.
var internalKinds = map[string]bool{"ProviderConfigUsage": true}

// pageSections are the headings every kind's page has.
var pageSections = []string{"## Examples", "## Fields and printer columns", "## Conditions", "## Events", "## Proxmox VE privileges", "## On delete"}

// TestEveryKindHasAPage fails when a kind in package/crds has no page under
// docs/kinds, a page lacks one of the sections every page has, or README.md's
// table does not link the page.
func TestEveryKindHasAPage(t *testing.T) {
	crds, err := filepath.Glob(filepath.Join("..", "package", "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs found in package/crds: %v", err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range crds {
		kind := kindOf(t, f)
		if internalKinds[kind] {
			continue
		}
		page := "kinds/" + strings.ToLower(kind) + ".md"
		b, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("%s has no page: %v", kind, err)
			continue
		}
		for _, s := range pageSections {
			if !strings.Contains(string(b), "\n"+s+"\n") {
				t.Errorf("docs/%s has no section %q", page, s)
			}
		}
		if !strings.Contains(string(readme), "](docs/"+page+")") {
			t.Errorf("README.md does not link docs/%s", page)
		}
	}
}

func kindOf(t *testing.T, crdFile string) string {
	t.Helper()
	b, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Names struct {
				Kind string `json:"kind"`
			} `json:"names"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &crd); err != nil || crd.Spec.Names.Kind == "" {
		t.Fatalf("cannot read the kind of %s: %v", crdFile, err)
	}
	return crd.Spec.Names.Kind
}
