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

package gated

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
)

var (
	vm         = schema.GroupVersionKind{Group: "proxmox.alperen.cloud", Version: "v1alpha1", Kind: "VirtualMachine"}
	connection = schema.GroupVersionKind{Group: "proxmox.alperen.cloud", Version: "v1alpha1", Kind: "ProxmoxConnection"}
	usage      = schema.GroupVersionKind{Group: "proxmox.alperen.cloud", Version: "v1alpha1", Kind: "ProviderConfigUsage"}
)

func TestSetupsRunOnlyOnceEveryKindIsServed(t *testing.T) {
	g := &gate.Gate[schema.GroupVersionKind]{}
	mapper := newMapper(vm, connection, usage)
	s := New(g, mapper, logging.NewNopLogger())
	ran := make(chan string, 2)
	s.Register("ProxmoxConnection", func() error { ran <- "ProxmoxConnection"; return nil }, connection, usage)
	s.Register("VirtualMachine", func() error { ran <- "VirtualMachine"; return nil }, vm)

	if diff := cmp.Diff([]string{"ProxmoxConnection", "VirtualMachine"}, s.Pending()); diff != "" {
		t.Errorf("Pending() before any kind is served: -want +got:\n%s", diff)
	}
	if err := s.Check(nil); err != nil {
		t.Errorf("Check() while kinds are not served: want healthy, got %v", err)
	}

	// The unhelpful order: the managed kind first, then half of what the
	// connection controller needs.
	g.Set(vm, true)
	g.Set(connection, true)
	if got := receive(t, ran); got != "VirtualMachine" {
		t.Fatalf("first setup: want VirtualMachine, got %s", got)
	}
	waitFor(t, func() bool { return len(s.Pending()) == 1 })
	if diff := cmp.Diff([]string{"ProxmoxConnection"}, s.Pending()); diff != "" {
		t.Errorf("Pending() with ProviderConfigUsage not served: -want +got:\n%s", diff)
	}

	g.Set(usage, true)
	if got := receive(t, ran); got != "ProxmoxConnection" {
		t.Fatalf("second setup: want ProxmoxConnection, got %s", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Wait(ctx); err != nil {
		t.Errorf("Wait(): %v", err)
	}
}

func TestFailedSetupFailsTheReadinessCheckNamingTheKind(t *testing.T) {
	g := &gate.Gate[schema.GroupVersionKind]{}
	mapper := newMapper(vm)
	s := New(g, mapper, logging.NewNopLogger())
	s.Register("VirtualMachine", func() error { return errors.New("cannot index by spec.providerConfigRef.resolvedName") }, vm)
	g.Set(vm, true)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.Wait(ctx)
	if err == nil {
		t.Fatal("Wait() after a failed setup: want the failure, got nil")
	}
	for _, want := range []string{"VirtualMachine", "cannot index by spec.providerConfigRef.resolvedName"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Wait() error %q does not name %q", err, want)
		}
	}
	if err := s.Check(nil); err == nil || !strings.Contains(err.Error(), "controller for VirtualMachine failed to start") {
		t.Errorf("Check(): want the failed VirtualMachine controller, got %v", err)
	}
}

func TestWaitSaysWhichKindsAreStillPending(t *testing.T) {
	s := New(&gate.Gate[schema.GroupVersionKind]{}, newMapper(vm), logging.NewNopLogger())
	s.Register("VirtualMachine", func() error { return nil }, vm)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := s.Wait(ctx)
	if err == nil || !strings.Contains(err.Error(), "VirtualMachine") {
		t.Errorf("Wait() with a kind never served: want an error naming VirtualMachine, got %v", err)
	}
}

// Discovery lists a kind a moment after its CRD is established: the setup
// must wait for the mapping rather than fail with "no matches for kind".
func TestSetupWaitsUntilDiscoveryMapsTheKind(t *testing.T) {
	g := &gate.Gate[schema.GroupVersionKind]{}
	mapper := newMapper()
	s := New(g, mapper, logging.NewNopLogger())
	ran := make(chan string, 1)
	s.Register("VirtualMachine", func() error { ran <- "VirtualMachine"; return nil }, vm)
	g.Set(vm, true)

	select {
	case <-ran:
		t.Fatal("the setup ran before the REST mapper knew VirtualMachine")
	case <-time.After(3 * mappingPoll):
	}
	mapper.learn(vm)
	if got := receive(t, ran); got != "VirtualMachine" {
		t.Fatalf("setup: want VirtualMachine, got %s", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Wait(ctx); err != nil {
		t.Errorf("Wait(): %v", err)
	}
}

// mapper maps the kinds it has learnt, as the manager's REST mapper does
// once API discovery lists them.
type mapper struct {
	meta.RESTMapper
	mu    sync.Mutex
	known map[schema.GroupVersionKind]bool
}

func newMapper(gvks ...schema.GroupVersionKind) *mapper {
	m := &mapper{known: map[schema.GroupVersionKind]bool{}}
	m.learn(gvks...)
	return m
}

func (m *mapper) learn(gvks ...schema.GroupVersionKind) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, gvk := range gvks {
		m.known[gvk] = true
	}
}

func (m *mapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	gvk := gk.WithVersion(versions[0])
	if !m.known[gvk] {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return &meta.RESTMapping{GroupVersionKind: gvk, Scope: meta.RESTScopeNamespace}, nil
}

func receive(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no setup ran within 10s")
		return ""
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
