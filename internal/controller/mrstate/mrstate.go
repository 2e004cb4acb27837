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

// Package mrstate publishes crossplane-runtime's managed resource state
// metrics (crossplane_managed_resource_exists, _ready and _synced, labelled
// by GVK) for a managed kind.
package mrstate

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
)

// Setup adds a recorder of list's kind to mgr, counting from the manager's
// cache every o.MetricOptions.PollStateMetricInterval. It does nothing when
// o carries no state metrics. Call it from the kind's gated controller setup:
// the count lists the kind, which must be served.
func Setup(mgr ctrl.Manager, o controller.Options, list resource.ManagedList) error {
	if o.MetricOptions == nil || o.MetricOptions.MRStateMetrics == nil {
		return nil
	}
	every := o.MetricOptions.PollStateMetricInterval
	if every <= 0 {
		every = time.Minute
	}
	r := &recorder{
		cache:   cacheLister{Client: mgr.GetClient()},
		empty:   list,
		metrics: o.MetricOptions.MRStateMetrics,
		every:   every,
		log:     o.Logger,
	}
	return errors.Wrap(mgr.Add(r), "cannot add the managed resource state recorder")
}

// recorder counts on a ticker like statemetrics.MRStateRecorder.Start, but a
// failed count is logged and retried at the next tick: the runtime's loop
// returns the error, and a runnable's error stops the whole manager.
type recorder struct {
	cache   client.Client
	empty   resource.ManagedList // each count lists into a fresh copy of it
	metrics *statemetrics.MRStateMetrics
	every   time.Duration
	log     logging.Logger
}

// Start counts at once, then every interval until ctx ends.
func (r *recorder) Start(ctx context.Context) error {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		if err := r.count(ctx); err != nil {
			r.log.Info("Cannot record managed resource state metrics", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// count records the kind's state metrics once. statemetrics.MRStateRecorder
// keeps the list it counted until its next count, so each count gets a
// recorder of its own and a list that is garbage once counted: with
// thousands of resources, a list kept for good would be a second copy of
// the kind's cache.
func (r *recorder) count(ctx context.Context) error {
	list, ok := r.empty.DeepCopyObject().(resource.ManagedList)
	if !ok {
		return errors.Errorf("%T is not a managed resource list", r.empty)
	}
	return statemetrics.NewMRStateRecorder(r.cache, r.log, r.metrics, list, r.every).Record(ctx)
}

// cacheLister lists the objects of the manager's cache themselves instead
// of deep copies of them: the count only reads their conditions, and copying
// thousands of resources every few seconds was most of the provider's
// allocations in the steady state.
type cacheLister struct{ client.Client }

func (c cacheLister) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.Client.List(ctx, list, append(opts, client.UnsafeDisableDeepCopy)...)
}
