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

// Package gated sets controllers up only once the kinds they reconcile are
// served, and reports the ones whose setup failed.
//
// With Crossplane's safe-start a provider's CRDs appear when their
// ManagedResourceDefinitions are activated, possibly long after the provider
// started. A controller set up before its CRD is served fails (informers and
// field indexes need a REST mapping), so each controller is registered with
// crossplane-runtime's CRD gate and set up when the gate sees every kind it
// needs established and served, and the manager's REST mapper (which learns
// kinds from API discovery, a moment after the CRD is established) can map
// them. Until then it is pending, which is healthy: a
// provider whose kinds are not active yet has nothing to do. A setup that
// fails is logged by the gate's callback only; Setups keeps the error so that
// the readiness check fails and names the kind.
package gated

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
)

// Setups runs controller setups through a gate and tracks their outcome.
type Setups struct {
	gate   controller.Gate
	mapper meta.RESTMapper
	log    logging.Logger

	mu      sync.Mutex
	pending map[string]bool
	failed  map[string]error
	// changed is closed and replaced whenever a setup leaves pending.
	changed chan struct{}
}

// New returns Setups registering with g. mapper must be the one the
// controllers' informers use (the manager's).
func New(g controller.Gate, mapper meta.RESTMapper, log logging.Logger) *Setups {
	return &Setups{
		gate:    g,
		mapper:  mapper,
		log:     log,
		pending: map[string]bool{},
		failed:  map[string]error{},
		changed: make(chan struct{}),
	}
}

// Register runs setup once every kind in needs is served. name says what is
// set up (the kind a controller reconciles) in logs and in the readiness
// check.
func (s *Setups) Register(name string, setup func() error, needs ...schema.GroupVersionKind) {
	s.mu.Lock()
	s.pending[name] = true
	s.mu.Unlock()
	s.log.Debug("Waiting for kinds to be served before setting up a controller", "controller", name, "kinds", kinds(needs))
	s.gate.Register(func() { s.run(name, setup, needs) }, needs...)
}

func (s *Setups) run(name string, setup func() error, needs []schema.GroupVersionKind) {
	err := s.waitUntilMapped(needs)
	if err == nil {
		err = setup()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, name)
	if err != nil {
		s.failed[name] = err
		s.log.Info("Cannot set up controller", "controller", name, "error", err)
	} else {
		s.log.Info("Controller set up: its kinds are served", "controller", name)
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitUntilMapped waits until the REST mapper maps every kind in needs. The
// gate opens when a CRD is established, but API discovery, from which the
// mapper learns kinds, can lag behind; a setup started in between fails with
// "no matches for kind" and, having perhaps registered half of itself, could
// not simply be run again.
func (s *Setups) waitUntilMapped(needs []schema.GroupVersionKind) error {
	ctx, cancel := context.WithTimeout(context.Background(), mappingTimeout)
	defer cancel()
	for _, gvk := range needs {
		err := wait.PollUntilContextCancel(ctx, mappingPoll, true, func(context.Context) (bool, error) {
			_, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			return err == nil, nil
		})
		if err != nil {
			return errors.Errorf("the API server serves %s but its discovery does not list it after %s", gvk, mappingTimeout)
		}
	}
	return nil
}

// Check is a readiness check: it fails while any setup has failed, naming
// each failed controller with its error. Pending setups are not a failure:
// their kinds are simply not active yet.
func (s *Setups) Check(_ *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failed) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(s.failed))
	for name, err := range s.failed {
		msgs = append(msgs, fmt.Sprintf("controller for %s failed to start: %v", name, err))
	}
	sort.Strings(msgs)
	return errors.New(strings.Join(msgs, "; "))
}

// Pending returns the controllers still waiting for their kinds, sorted.
func (s *Setups) Pending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.pending))
	for name := range s.pending {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Wait blocks until no setup is pending, and returns the readiness check's
// verdict then. Programs and tests that install every CRD up front use it to
// know the controllers run.
func (s *Setups) Wait(ctx context.Context) error {
	for {
		s.mu.Lock()
		n, changed := len(s.pending), s.changed
		s.mu.Unlock()
		if n == 0 {
			return s.Check(nil)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return errors.Wrapf(ctx.Err(), "controllers still waiting for their kinds to be served: %s", strings.Join(s.Pending(), ", "))
		}
	}
}

func kinds(gvks []schema.GroupVersionKind) []string {
	out := make([]string, 0, len(gvks))
	for _, gvk := range gvks {
		out = append(out, gvk.Kind+"."+gvk.Group+"/"+gvk.Version)
	}
	return out
}

const (
	// mappingTimeout bounds the wait for discovery to list a kind whose CRD
	// is established; it takes well under a second.
	mappingTimeout = time.Minute
	mappingPoll    = 100 * time.Millisecond
)

// indexTimeout bounds building a field index. Once the manager runs, indexing
// a kind starts its informer and waits for the informer's first list.
const indexTimeout = 2 * time.Minute

// IndexField adds a field index over obj's kind to mgr's cache. Gated setups
// run from the gate's callback, with no context of their own, often after the
// manager's cache started; the wait for the informer is bounded here instead.
func IndexField(mgr ctrl.Manager, obj client.Object, field string, extract client.IndexerFunc) error {
	ctx, cancel := context.WithTimeout(context.Background(), indexTimeout)
	defer cancel()
	return errors.Wrapf(mgr.GetFieldIndexer().IndexField(ctx, obj, field, extract), "cannot index by %s", field)
}
