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

package guest

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

// DefaultPollInterval is how often a Ready guest is observed when the
// controller options set no poll interval.
const DefaultPollInterval = time.Minute

// Kind is what a guest kind's controller brings to Setup.
type Kind[T resource.Managed] struct {
	// Name of the controller.
	Name string
	// GroupVersionKind of the managed resource.
	GroupVersionKind schema.GroupVersionKind
	// Object is an empty resource of the kind; List an empty list of it.
	Object client.Object
	List   resource.ManagedList
	// Connector returns the kind's connector, given the recorder and the poll
	// interval the controller uses.
	Connector func(rec event.Recorder, poll time.Duration) managed.TypedExternalConnector[T]
	// PollSoon reports whether a Ready resource is to be observed again
	// within seconds (a task of ours runs, a reboot is due).
	PollSoon func(mg resource.Managed) bool
}

// Setup adds the controller of a guest kind to mgr: the managed reconciler
// with the options every guest kind needs, re-observing every resource of a
// connection as soon as its client is replaced (a rotated credential), and
// the kind's state metrics.
func Setup[T resource.Managed](mgr ctrl.Manager, o controller.Options, clients *pve.Cache, k Kind[T]) error {
	//nolint:staticcheck // crossplane-runtime's event recorder needs the legacy recorder interface.
	recorder := event.NewAPIRecorder(mgr.GetEventRecorderFor(k.Name), o.EventFilterFunctions...)
	poll := o.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	opts := []managed.ReconcilerOption{
		managed.WithTypedExternalConnector[T](k.Connector(recorder, poll)),
		// No initializer: an empty external name means "no VMID picked
		// yet" (the default one would write metadata.name there).
		managed.WithInitializers(),
		// The VMID is stored before PVE is called, so an interrupted create
		// is always resolvable: never stall on it.
		managed.WithDeterministicExternalName(true),
		// Observe confirms absence itself; a lost VMID race retries at once.
		managed.WithCreationGracePeriod(0),
		managed.WithPollIntervalHook(PollInterval(k.PollSoon)),
		managed.WithLogger(o.Logger.WithValues("controller", k.Name)),
		managed.WithPollInterval(poll),
		managed.WithRecorder(recorder),
	}
	if o.Features != nil && o.Features.Enabled(feature.EnableBetaManagementPolicies) {
		opts = append(opts, managed.WithManagementPolicies())
	}
	if o.MetricOptions != nil && o.MetricOptions.MRMetrics != nil {
		opts = append(opts, managed.WithMetricRecorder(o.MetricOptions.MRMetrics))
	}
	r := managed.NewReconciler(mgr, resource.ManagedKind(k.GroupVersionKind), opts...)

	b := ctrl.NewControllerManagedBy(mgr).
		Named(k.Name).
		WithOptions(o.ForControllerRuntime()).
		For(k.Object, builder.WithPredicates(resource.DesiredStateChanged()))
	if err := dependents.Watch(mgr, b, k.List, clients); err != nil {
		return errors.Wrap(err, "cannot watch ProxmoxConnection client changes")
	}
	if err := mrstate.Setup(mgr, o, k.List); err != nil {
		return err
	}
	return b.Complete(ratelimiter.NewReconciler(k.Name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}
