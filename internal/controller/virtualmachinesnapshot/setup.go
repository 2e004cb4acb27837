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

package virtualmachinesnapshot

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/dependents"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/mrstate"
)

// ControllerName is the name of the VirtualMachineSnapshot controller.
func ControllerName() string { return managed.ControllerName(v1alpha1.VirtualMachineSnapshotGroupKind) }

// Setup adds the VirtualMachineSnapshot controller to mgr, taking Proxmox
// clients from clients.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache) error {
	name := ControllerName()
	//nolint:staticcheck // crossplane-runtime's event recorder needs the legacy recorder interface.
	recorder := event.NewAPIRecorder(mgr.GetEventRecorderFor(name), o.EventFilterFunctions...)
	poll := o.PollInterval
	if poll <= 0 {
		poll = time.Minute
	}
	c := &connector{
		kube:    mgr.GetClient(),
		usage:   resource.NewProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
		clients: clients,
		record:  recorder,
	}
	opts := []managed.ReconcilerOption{
		managed.WithTypedExternalConnector[*v1alpha1.VirtualMachineSnapshot](c),
		managed.WithInitializers(initializer{kube: mgr.GetClient()}),
		// The name is stored before PVE is asked: an interrupted create is
		// always resolvable by looking for it.
		managed.WithDeterministicExternalName(true),
		managed.WithCreationGracePeriod(0),
		managed.WithPollIntervalHook(guest.PollInterval(pollSoon)),
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithPollInterval(poll),
		managed.WithRecorder(recorder),
	}
	if o.Features != nil && o.Features.Enabled(feature.EnableBetaManagementPolicies) {
		opts = append(opts, managed.WithManagementPolicies())
	}
	if o.MetricOptions != nil && o.MetricOptions.MRMetrics != nil {
		opts = append(opts, managed.WithMetricRecorder(o.MetricOptions.MRMetrics))
	}
	r := managed.NewReconciler(mgr, resource.ManagedKind(v1alpha1.VirtualMachineSnapshotGroupVersionKind), opts...)

	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.VirtualMachineSnapshot{}, builder.WithPredicates(resource.DesiredStateChanged()))
	if err := dependents.Watch(mgr, b, &v1alpha1.VirtualMachineSnapshotList{}, clients); err != nil {
		return errors.Wrap(err, "cannot watch ProxmoxConnection client changes")
	}
	if err := mrstate.Setup(mgr, o, &v1alpha1.VirtualMachineSnapshotList{}); err != nil {
		return err
	}
	return b.Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// pollSoon reports whether a snapshot is to be observed again within
// seconds although Ready: a task of ours (create, delete, rollback) runs.
func pollSoon(mg resource.Managed) bool {
	cr, ok := mg.(*v1alpha1.VirtualMachineSnapshot)
	if !ok {
		return false
	}
	return guest.TaskUnderway(cr.Status.LastTask) || rollbackUnderway(cr)
}
