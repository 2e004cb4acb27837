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

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/dependents"
	"github.com/kubemox/provider-proxmox/internal/controller/mrstate"
	"github.com/kubemox/provider-proxmox/internal/controller/polling"
	"github.com/kubemox/provider-proxmox/internal/controller/ratelimit"
)

// ManagedKind is what the controller setup of one managed kind differs in.
type ManagedKind[T resource.Managed] struct {
	// GVK of the kind; its group kind names the controller.
	GVK schema.GroupVersionKind
	// Object is an empty object of the kind, List an empty list of it.
	Object T
	List   resource.ManagedList
	// Connector hands out the kind's external clients.
	Connector managed.TypedExternalConnector[T]
	// Initializers run before the first Observe; none by default (the
	// default one would write metadata.name as the external name).
	Initializers []managed.Initializer
	// PollSoon reports whether a Ready resource is to be observed again
	// within seconds (a task of ours runs); nil: never.
	PollSoon func(mg resource.Managed) bool
	// Polling spaces the checks of settled resources (jitter) and records
	// when each is due.
	Polling polling.Policy
	// Watch, when set, adds sources that reconcile resources of the kind
	// (the Secrets they read, say).
	Watch func(b *builder.Builder) *builder.Builder
}

// ControllerName is the name of the managed reconciler of gvk's kind.
func ControllerName(gvk schema.GroupVersionKind) string {
	return managed.ControllerName(gvk.GroupKind().String())
}

// Recorder is the event recorder of the controller name.
func Recorder(mgr ctrl.Manager, o controller.Options, name string) event.Recorder {
	//nolint:staticcheck // crossplane-runtime's event recorder needs the legacy recorder interface.
	return event.NewAPIRecorder(mgr.GetEventRecorderFor(name), o.EventFilterFunctions...)
}

// PollIntervalOf is the provider's poll interval, a minute when unset.
func PollIntervalOf(o controller.Options) time.Duration {
	if o.PollInterval <= 0 {
		return time.Minute
	}
	return o.PollInterval
}

// SetupManaged adds the managed reconciler of kind k to mgr, the way every
// guest-backed kind runs: the external name is stored before Proxmox VE is
// asked to create anything (WithDeterministicExternalName), absence is
// confirmed by Observe itself (no creation grace period), resources with a
// task under way are polled within seconds, resources of a connection whose
// client was replaced are re-observed at once, those of a connection that is
// down wait for it once they report it, those of a slow connection wait for
// a turn rather than take every worker (both dependents.Gate), and the
// kind's state metrics are published. Settled resources are polled with the
// kind's jitter, and changes are sent to the change log when o has one.
func SetupManaged[T resource.Managed](mgr ctrl.Manager, o controller.Options, clients *pve.Cache, recorder event.Recorder, k ManagedKind[T]) error {
	name := ControllerName(k.GVK)
	opts := []managed.ReconcilerOption{
		managed.WithTypedExternalConnector[T](k.Connector),
		managed.WithInitializers(k.Initializers...),
		managed.WithDeterministicExternalName(true),
		managed.WithCreationGracePeriod(0),
		managed.WithPollIntervalHook(PollInterval(k.GVK.Kind, pollSoonOrNever(k.PollSoon), k.Polling)),
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithPollInterval(PollIntervalOf(o)),
		managed.WithRecorder(recorder),
	}
	if o.Features != nil && o.Features.Enabled(feature.EnableBetaManagementPolicies) {
		opts = append(opts, managed.WithManagementPolicies())
	}
	if o.ChangeLogOptions != nil && o.ChangeLogOptions.ChangeLogger != nil {
		opts = append(opts, managed.WithChangeLogger(o.ChangeLogOptions.ChangeLogger))
	}
	if o.MetricOptions != nil && o.MetricOptions.MRMetrics != nil {
		opts = append(opts, managed.WithMetricRecorder(o.MetricOptions.MRMetrics))
	}
	r := managed.NewReconciler(mgr, resource.ManagedKind(k.GVK), opts...)

	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(k.Object, builder.WithPredicates(resource.DesiredStateChanged()))
	if k.Watch != nil {
		b = k.Watch(b)
	}
	if err := dependents.Watch(mgr, b, k.List, clients); err != nil {
		return errors.Wrap(err, "cannot watch ProxmoxConnection client changes")
	}
	if err := mrstate.Setup(mgr, o, k.List); err != nil {
		return err
	}
	// The gate comes first: a resource waiting for its connection takes no
	// token from the global rate limiter.
	limited := ratelimit.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter)
	newManaged := func() resource.Managed { return k.Object.DeepCopyObject().(resource.Managed) } //nolint:forcetypeassert // a copy of a T, which is a resource.Managed
	gated := dependents.Gate(limited, mgr.GetClient(), clients, newManaged, PollIntervalOf(o))
	return b.WatchesRawSource(gated.Wakeups()).Complete(gated)
}

func pollSoonOrNever(soon func(mg resource.Managed) bool) func(mg resource.Managed) bool {
	if soon != nil {
		return soon
	}
	return func(resource.Managed) bool { return false }
}
