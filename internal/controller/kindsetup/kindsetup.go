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

// Package kindsetup adds the controller of one managed kind to a manager:
// what every kind's controller has, so each kind states only its own
// reconciler options.
package kindsetup

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/dependents"
	"github.com/kubemox/provider-proxmox/internal/controller/mrstate"
)

// defaultPoll is the poll interval when the provider sets none.
const defaultPoll = time.Minute

// Controller is one managed kind's controller being set up.
type Controller struct {
	// Name is the controller's name (managed.ControllerName of the kind).
	Name string
	// Poll is how often a Ready resource is observed.
	Poll time.Duration
	// Recorder records the kind's events.
	Recorder event.Recorder
}

// New starts setting up the controller named name: its event recorder and
// poll interval.
func New(mgr ctrl.Manager, o controller.Options, name string) Controller {
	//nolint:staticcheck // crossplane-runtime's event recorder needs the legacy recorder interface.
	recorder := event.NewAPIRecorder(mgr.GetEventRecorderFor(name), o.EventFilterFunctions...)
	poll := o.PollInterval
	if poll <= 0 {
		poll = defaultPoll
	}
	return Controller{Name: name, Poll: poll, Recorder: recorder}
}

// Complete adds the controller of the kind gvk (obj one of its objects,
// list a list of them) to mgr: a managed reconciler with the kind's opts
// plus its logger, poll interval and recorder, management policies and
// resource metrics when the provider enables them; re-observing every
// resource of a connection whose client is replaced; state metrics; and
// the provider's global rate limit.
func (c Controller) Complete(mgr ctrl.Manager, o controller.Options, clients *pve.Cache, gvk schema.GroupVersionKind, obj client.Object, list resource.ManagedList, opts ...managed.ReconcilerOption) error {
	opts = append(opts,
		managed.WithLogger(o.Logger.WithValues("controller", c.Name)),
		managed.WithPollInterval(c.Poll),
		managed.WithRecorder(c.Recorder),
	)
	if o.Features != nil && o.Features.Enabled(feature.EnableBetaManagementPolicies) {
		opts = append(opts, managed.WithManagementPolicies())
	}
	if o.MetricOptions != nil && o.MetricOptions.MRMetrics != nil {
		opts = append(opts, managed.WithMetricRecorder(o.MetricOptions.MRMetrics))
	}
	r := managed.NewReconciler(mgr, resource.ManagedKind(gvk), opts...)

	b := ctrl.NewControllerManagedBy(mgr).
		Named(c.Name).
		WithOptions(o.ForControllerRuntime()).
		For(obj, builder.WithPredicates(resource.DesiredStateChanged()))
	if err := dependents.Watch(mgr, b, list, clients); err != nil {
		return errors.Wrap(err, "cannot watch ProxmoxConnection client changes")
	}
	if err := mrstate.Setup(mgr, o, list); err != nil {
		return err
	}
	return b.Complete(ratelimiter.NewReconciler(c.Name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}
