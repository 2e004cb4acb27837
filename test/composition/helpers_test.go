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

package composition

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// renderTimeout bounds one render; it takes well under a second when idle.
const renderTimeout = 2 * time.Minute

// Paths relative to this package: the manifests under test and the
// provider's CRDs.
const (
	examplesDir  = "../../examples/composition"
	providerCRDs = "../../package/crds"
)

// exampleForm is one of the two forms of the example API: a directory under
// examplesDir with definition.yaml (the XRD) and composition.yaml.
type exampleForm string

const (
	// claimForm: an apiextensions.crossplane.io/v1 XRD with claimNames.
	claimForm exampleForm = "claim"
	// namespacedForm: an apiextensions.crossplane.io/v2 XRD, scope Namespaced.
	namespacedForm exampleForm = "namespaced"
)

func (f exampleForm) file(name string) string { return filepath.Join(examplesDir, string(f), name) }

// rendered is what one render produced.
type rendered struct {
	xr       *unstructured.Unstructured
	composed []*unstructured.Unstructured
	// results are the functions' messages (kind Result, --include-function-results).
	results []*unstructured.Unstructured
}

// render runs `crossplane composition render` on xr with the form's XRD and
// Composition and the example Function (switched to the Development runtime
// and pointed at the package's running function). observed, when not empty,
// is a testdata directory with observed.yaml (composed resources as they exist)
// and connection.yaml (the Secrets they published their connection details
// to: render's in-memory API server holds them, where Crossplane's real
// connection details fetcher reads them).
func (r *renderTools) render(t *testing.T, form exampleForm, xr *unstructured.Unstructured, observed string) rendered {
	t.Helper()
	xrFile := filepath.Join(t.TempDir(), "xr.yaml")
	writeYAML(t, xrFile, xr.Object)
	args := []string{
		"composition", "render", xrFile, form.file("composition.yaml"), filepath.Join(examplesDir, "function.yaml"),
		"--xrd", form.file("definition.yaml"),
		"--crossplane-binary", r.core,
		"--function-annotations", "render.crossplane.io/runtime=Development",
		"--function-annotations", "render.crossplane.io/runtime-development-target=" + r.fnTarget,
		"--include-function-results",
		"--timeout", renderTimeout.String(),
	}
	if observed != "" {
		args = append(args,
			"--observed-resources", filepath.Join("testdata", observed, "observed.yaml"),
			"--function-credentials", filepath.Join("testdata", observed, "connection.yaml"))
	}
	ctx, cancel := context.WithTimeout(t.Context(), renderTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, r.cli, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// The CLI keeps its configuration under $HOME; keep it out of the real one.
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := cmd.Run(); err != nil {
		t.Fatalf("crossplane %s: %v\nstderr:\n%s\nfunction log (end):\n%s", strings.Join(args, " "), err, stderr.String(), r.fnLogTail())
	}
	return parseRendered(t, stdout.Bytes())
}

// fnLogTail is the end of the function's log, to tell why a render failed.
func (r *renderTools) fnLogTail() string {
	const tail = 4096
	data, err := os.ReadFile(r.fnLog)
	if err != nil {
		return err.Error()
	}
	return string(data[max(0, len(data)-tail):])
}

// validate runs `crossplane resource validate` offline on the composed
// resources of a render, against the provider's CRDs: the OpenAPI schema and
// the CEL rules the API server would enforce. It returns the command's report
// when something is invalid or has no schema. (The rendered XR is partial:
// render prints its status, not its whole spec.)
func (r *renderTools) validate(t *testing.T, out rendered) string {
	t.Helper()
	var stream bytes.Buffer
	for _, u := range out.composed {
		data, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatalf("cannot marshal %s: %v", u.GetKind(), err)
		}
		stream.WriteString("---\n")
		stream.Write(data)
	}
	ctx, cancel := context.WithTimeout(t.Context(), renderTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.cli, "resource", "validate", providerCRDs, "-",
		"--crossplane-image=", "--cache-dir", t.TempDir(), "--error-on-missing-schemas")
	cmd.Stdin = &stream
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	report, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%v\n%s", err, report)
	}
	return ""
}

func parseRendered(t *testing.T, out []byte) rendered {
	t.Helper()
	docs, err := decodeAll(out)
	if err != nil {
		t.Fatalf("cannot parse render output: %v\n%s", err, out)
	}
	if len(docs) == 0 {
		t.Fatalf("render printed no composite resource:\n%s", out)
	}
	// The CLI prints the XR first.
	r := rendered{xr: docs[0]}
	for _, u := range docs[1:] {
		if u.GetKind() == "Result" {
			r.results = append(r.results, u)
			continue
		}
		r.composed = append(r.composed, u)
	}
	return r
}

// decodeAll decodes a stream of YAML documents, skipping empty ones.
func decodeAll(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	dec := kyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if u.Object != nil {
			out = append(out, u)
		}
	}
}

// composedOf returns the composed resources of one kind.
func (r rendered) composedOf(apiVersion, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range r.composed {
		if u.GetAPIVersion() == apiVersion && u.GetKind() == kind {
			out = append(out, u)
		}
	}
	return out
}

// exampleObject reads the object of the given kind from an example file.
func exampleObject(t *testing.T, file, kind string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("cannot read example: %v", err)
	}
	docs, err := decodeAll(data)
	if err != nil {
		t.Fatalf("cannot parse %s: %v", file, err)
	}
	for _, u := range docs {
		if u.GetKind() == kind {
			return u
		}
	}
	t.Fatalf("%s holds no %s", file, kind)
	return nil
}

func writeYAML(t *testing.T, path string, obj any) {
	t.Helper()
	data, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatalf("cannot marshal %s: %v", path, err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatalf("cannot write %s: %v", path, err)
	}
}

// decodeStrict converts u into out, failing on any field out's type does not
// have: a Composition patching a misspelled field of our API fails here.
func decodeStrict(t *testing.T, u *unstructured.Unstructured, out any) {
	t.Helper()
	data, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatalf("cannot marshal %s: %v", u.GetKind(), err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		t.Fatalf("rendered %s does not decode into the provider's type: %v\n%s", u.GetKind(), err, data)
	}
}

// renderedOne is the one composed resource of a kind a render produced,
// decoded strictly into a T, or nil if it composed none.
func renderedOne[T any](t *testing.T, r rendered, apiVersion, kind string) *T {
	t.Helper()
	objs := r.composedOf(apiVersion, kind)
	switch len(objs) {
	case 0:
		return nil
	case 1:
		out := new(T)
		decodeStrict(t, objs[0], out)
		return out
	default:
		t.Fatalf("render composed %d %s, want at most one", len(objs), kind)
		return nil
	}
}
