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

// Command crdref writes the API reference under docs/reference from the CRDs
// controller-gen wrote (`make generate` runs it after controller-gen), one page per
// kind and an index. It reads the CRDs rather than the Go types so the reference
// shows exactly what the API server enforces: defaults, enums, bounds and CEL rules
// included. `make check-generate` fails when the checked-in pages are stale.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	crdDir := flag.String("crds", "", "directory of the CRD YAML files controller-gen wrote")
	outDir := flag.String("out", "", "directory to write the reference to; the Markdown files in it are replaced")
	flag.Parse()
	if err := generate(*crdDir, *outDir); err != nil {
		fmt.Fprintln(os.Stderr, "crdref:", err)
		os.Exit(1)
	}
}

// generate replaces the Markdown pages in outDir with one page per CRD in crdDir
// and an index (README.md) linking them.
func generate(crdDir, outDir string) error {
	if crdDir == "" || outDir == "" {
		return errors.New("both --crds and --out are required")
	}
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil {
		return errors.Wrap(err, "cannot list CRD files")
	}
	crds := make([]*extv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		crd, err := readCRD(f)
		if err != nil {
			return err
		}
		crds = append(crds, crd)
	}
	slices.SortFunc(crds, func(a, b *extv1.CustomResourceDefinition) int {
		return strings.Compare(a.Spec.Names.Kind, b.Spec.Names.Kind)
	})
	if err := removeMarkdown(outDir); err != nil {
		return err
	}
	for _, crd := range crds {
		if err := writePage(filepath.Join(outDir, pageName(crd)), kindPage(crd)); err != nil {
			return err
		}
	}
	return writePage(filepath.Join(outDir, "README.md"), indexPage(crds))
}

// pageName is the file of a kind's reference page: its lower-case kind.
func pageName(crd *extv1.CustomResourceDefinition) string {
	return strings.ToLower(crd.Spec.Names.Kind) + ".md"
}

func readCRD(path string) (*extv1.CustomResourceDefinition, error) {
	b, err := os.ReadFile(path) //nolint:gosec // a file of the directory the caller names
	if err != nil {
		return nil, errors.Wrapf(err, "cannot read %s", path)
	}
	crd := &extv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(b, crd); err != nil {
		return nil, errors.Wrapf(err, "cannot parse %s", path)
	}
	return crd, nil
}

func writePage(path, text string) error {
	return errors.Wrapf(os.WriteFile(path, []byte(text), 0o644), "cannot write %s", path) //nolint:gosec // a checked-in page
}

// removeMarkdown empties outDir of pages, so a page whose CRD is gone leaves
// nothing behind.
func removeMarkdown(outDir string) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil { //nolint:gosec // a checked-in directory
		return errors.Wrapf(err, "cannot create %s", outDir)
	}
	old, err := filepath.Glob(filepath.Join(outDir, "*.md"))
	if err != nil {
		return errors.Wrapf(err, "cannot list %s", outDir)
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return errors.Wrapf(err, "cannot remove %s", f)
		}
	}
	return nil
}
