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

package crossplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// phase runs one step of the story as a subtest, logs how long it took and
// stops the test when it failed: every later step builds on it.
func (s *suite) phase(name string, f func(t *testing.T)) {
	s.t.Helper()
	start := time.Now()
	ok := s.t.Run(name, f)
	d := time.Since(start).Round(100 * time.Millisecond)
	s.durations = append(s.durations, fmt.Sprintf("%-58s %8s", name, d))
	s.t.Logf("phase %q took %s", name, d)
	if !ok {
		s.t.FailNow()
	}
}

// eventually polls cond every second until it holds; after timeout it fails
// t with what cond last said and the tails of the logs that tell why.
func (s *suite) eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s; last seen: %s\n%s", what, timeout, last, s.logTails())
		}
		time.Sleep(time.Second)
	}
}

// logTails are the ends of the logs of the processes the stack runs.
func (s *suite) logTails() string {
	if s.xp == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range []string{"provider", "crossplane", "fn-" + functionName, "rbac-manager"} {
		fmt.Fprintf(&b, "--- %s log tail:\n%s\n", c, tail(s.xp.LogPath(c), 3000))
	}
	return b.String()
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// applyFile creates every object of a YAML file.
func (s *suite) applyFile(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := d.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("decode %s: %v", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := s.kube.Create(context.Background(), u); err != nil {
			t.Fatalf("create %s %s from %s: %v", u.GetKind(), u.GetName(), path, err)
		}
	}
}

// object is a Crossplane (or any other) object read as unstructured.
func object(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// get reads o again; the error says what went wrong.
func (s *suite) get(o *unstructured.Unstructured) error {
	return s.kube.Get(context.Background(), client.ObjectKeyFromObject(o), o)
}

// conditionTrue reports whether a status condition of type typ is True.
func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	return conditionStatus(u, typ) == "True"
}

func conditionStatus(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ {
			return fmt.Sprintf("%v", m["status"])
		}
	}
	return ""
}

// conditionsOf summarises an object's conditions for a failure message.
func conditionsOf(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var parts []string
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			parts = append(parts, fmt.Sprintf("%v=%v (%v: %v)", m["type"], m["status"], m["reason"], m["message"]))
		}
	}
	return strings.Join(parts, "; ")
}

// waitCondition waits until o's condition typ is True.
func (s *suite) waitCondition(t *testing.T, timeout time.Duration, o *unstructured.Unstructured, typ string) {
	t.Helper()
	what := fmt.Sprintf("%s %s %s", o.GetKind(), types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, typ)
	s.eventually(t, timeout, what, func() (bool, string) {
		if err := s.get(o); err != nil {
			return false, err.Error()
		}
		return conditionTrue(o, typ), conditionsOf(o)
	})
}

// waitGone waits until o no longer exists.
func (s *suite) waitGone(t *testing.T, timeout time.Duration, o client.Object) {
	t.Helper()
	what := fmt.Sprintf("%T %s/%s deleted", o, o.GetNamespace(), o.GetName())
	s.eventually(t, timeout, what, func() (bool, string) {
		err := s.kube.Get(context.Background(), client.ObjectKeyFromObject(o), o)
		if kerrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("err %v, finalizers %v, deletion %v", err, o.GetFinalizers(), o.GetDeletionTimestamp())
	})
}
