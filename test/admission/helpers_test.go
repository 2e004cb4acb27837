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

package admission

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubemox/provider-proxmox/apis"
)

// admissionCase is one manifest sent to the API server. A nil wantErr means it
// must be accepted; otherwise every string in wantErr must appear in the
// rejection, and every cause of the rejection must contain one of them (so a
// case fails for the reason it was written for, not another).
type admissionCase struct {
	manifest string
	wantErr  []string
}

// newClient returns a client of the package's API server that rejects unknown
// fields, as kubectl apply does by default.
func newClient(t *testing.T) client.Client {
	t.Helper()
	env.Require(t)
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatalf("cannot build scheme: %v", err)
	}
	if err := apis.AddToScheme(s); err != nil {
		t.Fatalf("cannot add provider types to scheme: %v", err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: s, FieldValidation: "Strict"})
	if err != nil {
		t.Fatalf("cannot create client: %v", err)
	}
	return c
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// parse reads one YAML manifest.
func parse(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("cannot parse manifest: %v\n%s", err, manifest)
	}
	return u
}

// runAdmission dry-run creates each case's manifest and checks the verdict.
func runAdmission(t *testing.T, cases map[string]admissionCase) {
	t.Helper()
	c := newClient(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := parse(t, tc.manifest)
			if u.GetNamespace() == "" && (u.GetKind() == "VirtualMachine" || u.GetKind() == "Container") {
				u.SetNamespace("default") // as kubectl does with the current namespace
			}
			err := c.Create(testContext(t), u, client.DryRunAll)
			checkVerdict(t, err, tc.wantErr)
		})
	}
}

func checkVerdict(t *testing.T, err error, wantErr []string) {
	t.Helper()
	if len(wantErr) == 0 {
		if err != nil {
			t.Fatalf("want the manifest accepted, got: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("want a rejection naming %q, the manifest was accepted", wantErr)
	}
	if !kerrors.IsInvalid(err) {
		t.Fatalf("want an Invalid rejection, got: %v", err)
	}
	t.Logf("rejected as expected: %v", err)
	for _, want := range wantErr {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("rejection does not mention %q: %v", want, err)
		}
	}
	for _, cause := range causes(err) {
		if strings.Contains(cause.Message, notCheckedNotice) {
			continue
		}
		if !containsAny(cause.Field+": "+cause.Message, wantErr) {
			t.Errorf("unexpected rejection cause %s: %s (want only %q)", cause.Field, cause.Message, wantErr)
		}
	}
}

// notCheckedNotice is how the API server says it skipped CEL rules because
// the schema already failed; it accompanies the real cause.
const notCheckedNotice = "some validation rules were not checked"

type cause struct{ Field, Message string }

func causes(err error) []cause {
	var status kerrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	out := make([]cause, 0, len(status.Status().Details.Causes))
	for _, c := range status.Status().Details.Causes {
		out = append(out, cause{Field: c.Field, Message: c.Message})
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func unstructuredInt(obj map[string]any, fields ...string) (int64, bool, error) {
	return unstructured.NestedInt64(obj, fields...)
}
