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

package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	xperrors "github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ErrNotClean is returned by Export for a plan that needs a human.
var ErrNotClean = errors.New("the plan is not clean: run plan, resolve what needs a human, and export again")

// Export writes the plan's manifests into dir, one file per kubemox
// object with the Secrets it reads first, numbered in the order apply
// applies them (connections first). It refuses a plan that is not clean:
// an object left out would be deleted with kubemox's CRDs.
func Export(p *Plan, dir string) ([]string, error) {
	if !p.Clean() {
		return nil, ErrNotClean
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, xperrors.Wrap(err, "cannot create the export directory")
	}
	files := make([]string, 0, len(p.Items))
	for i, it := range p.Items {
		raw, err := itemYAML(it)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("%03d-%s-%s.yaml", i, strings.ToLower(it.Source.Kind.Name), fileSafe(it.Manifest.GetNamespace(), it.Manifest.GetName()))
		path := filepath.Join(dir, name)
		// The files may hold credentials moved out of specs.
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			return nil, xperrors.Wrapf(err, "cannot write %s", path)
		}
		files = append(files, path)
	}
	return files, nil
}

func fileSafe(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "-" + name
}

// itemYAML is an item's Secrets and manifest as one YAML stream.
func itemYAML(it *Item) ([]byte, error) {
	var b bytes.Buffer
	for _, s := range it.Secrets {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(secretManifest(s))
		if err != nil {
			return nil, xperrors.Wrap(err, "cannot convert a Secret")
		}
		if err := writeDoc(&b, obj); err != nil {
			return nil, err
		}
	}
	if err := writeDoc(&b, it.Manifest.Object); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// secretManifest is s with its type meta, so it applies as it is.
func secretManifest(s *corev1.Secret) *corev1.Secret {
	out := s.DeepCopy()
	out.APIVersion, out.Kind = "v1", "Secret"
	if out.Type == "" {
		out.Type = corev1.SecretTypeOpaque
	}
	return out
}

func writeDoc(w *bytes.Buffer, obj map[string]any) error {
	unstructured.RemoveNestedField(obj, "metadata", "creationTimestamp")
	raw, err := yaml.Marshal(obj)
	if err != nil {
		return xperrors.Wrap(err, "cannot write YAML")
	}
	w.WriteString("---\n")
	w.Write(raw)
	return nil
}

// ReadExport reads every object of an export directory, in file order.
func ReadExport(dir string) ([]*unstructured.Unstructured, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, xperrors.Wrap(err, "cannot list the export")
	}
	if len(paths) == 0 {
		return nil, xperrors.Errorf("no manifests in %s: run export first", dir)
	}
	sort.Strings(paths)
	var out []*unstructured.Unstructured
	for _, p := range paths {
		objs, err := readFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func readFile(path string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path) //nolint:gosec // files of the export directory the user names
	if err != nil {
		return nil, xperrors.Wrapf(err, "cannot read %s", path)
	}
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := d.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, xperrors.Wrapf(err, "cannot parse %s", path)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}
