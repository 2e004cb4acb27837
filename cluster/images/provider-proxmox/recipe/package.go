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

package recipe

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Package is one `crossplane xpkg build`.
type Package struct {
	// CLI is the crossplane CLI binary.
	CLI string
	// Root holds crossplane.yaml, the CRDs and the MRDs; Examples the examples.
	Root     string
	Examples string
	// RuntimeTarball is the runtime image written by WriteRuntimeTarball.
	RuntimeTarball string
	// Output is the .xpkg file to write.
	Output string
}

// BuildPackage runs `crossplane xpkg build`, leaving out each CRD the package also
// ships as a ManagedResourceDefinition (hack/mrdgen): one name defined twice would
// make Crossplane's package manager establish it twice.
func BuildPackage(ctx context.Context, p Package) error {
	replaced, err := crdsReplacedByMRDs(p.Root)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.Output), 0o755); err != nil { //nolint:gosec // a build output directory
		return errors.Wrapf(err, "cannot create the directory of %s", p.Output)
	}
	args := []string{
		"xpkg", "build", "--package-root", p.Root, "--examples-root", p.Examples,
		"--embed-runtime-image-tarball", p.RuntimeTarball, "--package-file", p.Output,
	}
	if len(replaced) > 0 {
		args = append(args, "--ignore", strings.Join(replaced, ","))
	}
	out, err := exec.CommandContext(ctx, p.CLI, args...).CombinedOutput() //nolint:gosec // the CLI the caller names
	return errors.Wrapf(err, "%s %s: %s", p.CLI, strings.Join(args, " "), out)
}

// crdsReplacedByMRDs lists, relative to root, the CRD files whose name an MRD under
// root also defines.
func crdsReplacedByMRDs(root string) ([]string, error) {
	crdFiles := map[string]string{} // CRD name -> file
	mrds := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		u, err := readManifest(path)
		if err != nil {
			return err
		}
		switch u.GetKind() {
		case "CustomResourceDefinition":
			crdFiles[u.GetName()] = path
		case "ManagedResourceDefinition":
			mrds[u.GetName()] = true
		}
		return nil
	})
	if err != nil {
		return nil, errors.Wrapf(err, "cannot read the package in %s", root)
	}
	var replaced []string
	for name := range mrds {
		if f, ok := crdFiles[name]; ok {
			rel, err := filepath.Rel(root, f)
			if err != nil {
				return nil, errors.Wrapf(err, "cannot make %s relative to %s", f, root)
			}
			replaced = append(replaced, rel)
		}
	}
	slices.Sort(replaced)
	return replaced, nil
}

// readManifest reads the first object of a YAML file; package files hold one each.
func readManifest(path string) (*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path) //nolint:gosec // a file of the package root
	if err != nil {
		return nil, errors.Wrapf(err, "cannot read %s", path)
	}
	u := &unstructured.Unstructured{}
	return u, errors.Wrapf(yaml.Unmarshal(b, &u.Object), "cannot parse %s", path)
}
