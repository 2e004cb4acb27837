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

package examples

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubemox/provider-proxmox/internal/testenv"
)

var (
	examplesDir = filepath.Join("..", "..", "examples")
	// The MRDs the package ships instead of CRDs are manifests too: they validate
	// against Crossplane's MRD schema here.
	mrdDir = filepath.Join("..", "..", "package", "mrds")
	crdDir = filepath.Join("..", "..", "package", "crds")
)

// manifest is one YAML document of a file.
type manifest struct {
	file string
	obj  *unstructured.Unstructured
}

// readManifests reads every document of every YAML file under dir.
func readManifests(t *testing.T, dir string) []manifest {
	t.Helper()
	var out []manifest
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".yml") {
			return err
		}
		b, err := os.ReadFile(path) //nolint:gosec // a repository file found by the walk
		if err != nil {
			return err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &u.Object); err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			if len(u.Object) > 0 {
				out = append(out, manifest{file: path, obj: u})
			}
		}
	})
	if err != nil {
		t.Fatalf("cannot read the manifests under %s: %v", dir, err)
	}
	return out
}

// objectKey is what identifies an object in a cluster: one applied over another
// with the same key replaces it.
type objectKey struct {
	groupKind       schema.GroupKind
	namespace, name string
}

func keyOf(u *unstructured.Unstructured) objectKey {
	return objectKey{u.GroupVersionKind().GroupKind(), u.GetNamespace(), u.GetName()}
}

func TestExampleObjectsAreDistinct(t *testing.T) {
	seen := map[objectKey]string{}
	for _, m := range readManifests(t, examplesDir) {
		k := keyOf(m.obj)
		if first, ok := seen[k]; ok {
			t.Errorf("%s %q (namespace %q) is defined in %s and again in %s: applying examples/ keeps only one",
				k.groupKind, k.name, k.namespace, first, m.file)
			continue
		}
		seen[k] = m.file
	}
}

// validationResult is the part of `crossplane resource validate -o json` the test
// reads (github.com/crossplane/cli/v2 pkg/validate ValidationResult).
type validationResult struct {
	Resources []struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Name       string `json:"name"`
		Namespace  string `json:"namespace"`
		Status     string `json:"status"`
		Errors     []struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"errors"`
	} `json:"resources"`
}

// TestExamplesValidate runs `crossplane resource validate` offline over examples/
// and package/mrds, against our CRDs, Crossplane's own, prometheus-operator's and the
// examples' XRDs. Only
// a Composition's function input may lack a schema (functions publish none here).
func TestExamplesValidate(t *testing.T) {
	cli, crdDirs := validator(t)
	examples := readManifests(t, examplesDir)
	mrds := readManifests(t, mrdDir)
	extensions := append([]string{crdDir}, crdDirs...)
	if xrds := writeXRDs(t, examples); xrds != "" {
		extensions = append(extensions, xrds)
	}
	cmd := exec.CommandContext(t.Context(), cli, "resource", "validate",
		"--crossplane-image=", "--cache-dir="+t.TempDir(), "--output=json",
		strings.Join(extensions, ","), examplesDir+","+mrdDir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var result validationResult
	if err := json.Unmarshal(stdout.Bytes(), &result); err != nil {
		t.Fatalf("crossplane resource validate (%v) printed no result: %v\nstdout:\n%s\nstderr:\n%s", runErr, err, stdout.String(), stderr.String())
	}
	inputs := functionInputs(t, examples)
	validated := map[objectKey]bool{}
	for _, r := range result.Resources {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(r.APIVersion)
		u.SetKind(r.Kind)
		u.SetNamespace(r.Namespace)
		u.SetName(r.Name)
		validated[keyOf(u)] = true
		switch {
		case r.Status == "valid":
		case r.Status == "missingSchema" && inputs[r.APIVersion+"/"+r.Kind]:
			// A function's input: Crossplane validates it only when the function
			// package, downloaded from its registry, ships a schema.
		default:
			t.Errorf("crossplane resource validate: %s %s/%s: %s %+v", r.Kind, r.Namespace, r.Name, r.Status, r.Errors)
		}
	}
	for _, m := range append(examples, mrds...) {
		if !validated[keyOf(m.obj)] {
			t.Errorf("%s: %s %q was not validated", m.file, m.obj.GetKind(), m.obj.GetName())
		}
	}
	if t.Failed() {
		t.Logf("crossplane resource validate (%v):\n%s\n%s", runErr, stdout.String(), stderr.String())
	}
}

// validator is the Crossplane CLI and the CRD directories the examples validate
// against beyond ours: Crossplane's and prometheus-operator's (examples/monitoring).
func validator(t *testing.T) (cli string, crdDirs []string) {
	t.Helper()
	cli, err := testenv.Tool("crossplane")
	for _, dir := range []func() (string, error){testenv.CrossplaneCRDDir, testenv.PrometheusOperatorCRDDir} {
		if err != nil {
			break
		}
		var d string
		if d, err = dir(); err == nil {
			crdDirs = append(crdDirs, d)
		}
	}
	if err != nil {
		if os.Getenv(testenv.SkipEnvVar) == "1" {
			t.Skipf("%s=1 and the Crossplane CLI or the CRDs are not built: %v", testenv.SkipEnvVar, err)
		}
		t.Fatal(err)
	}
	return cli, crdDirs
}

// writeXRDs writes the examples' XRDs into one file for --extensions, so the XRs
// and claims they define validate; "" when there are none. Passing examples/ as
// extensions would also make the CLI download every package a Function or
// Provider example names.
func writeXRDs(t *testing.T, examples []manifest) string {
	t.Helper()
	var docs [][]byte
	for _, m := range examples {
		if m.obj.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apiextensions.crossplane.io", Kind: "CompositeResourceDefinition"}) {
			continue
		}
		b, err := yaml.Marshal(m.obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	if len(docs) == 0 {
		return ""
	}
	path := filepath.Join(t.TempDir(), "xrds.yaml")
	if err := os.WriteFile(path, bytes.Join(docs, []byte("---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// functionInputs are the apiVersion/kind of the Compositions' function inputs.
func functionInputs(t *testing.T, examples []manifest) map[string]bool {
	t.Helper()
	inputs := map[string]bool{}
	for _, m := range examples {
		if m.obj.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apiextensions.crossplane.io", Kind: "Composition"}) {
			continue
		}
		steps, _, err := unstructured.NestedSlice(m.obj.Object, "spec", "pipeline")
		if err != nil {
			t.Fatalf("%s: spec.pipeline: %v", m.file, err)
		}
		for _, s := range steps {
			step, _ := s.(map[string]any)
			apiVersion, _, _ := unstructured.NestedString(step, "input", "apiVersion")
			kind, _, _ := unstructured.NestedString(step, "input", "kind")
			inputs[apiVersion+"/"+kind] = true
		}
	}
	return inputs
}
