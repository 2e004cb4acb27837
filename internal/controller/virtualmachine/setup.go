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

package virtualmachine

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

// ControllerName is the name of the VirtualMachine controller.
func ControllerName() string { return managed.ControllerName(v1alpha1.VirtualMachineGroupKind) }

// Setup adds the VirtualMachine controller to mgr. It takes Proxmox clients
// from clients and re-observes every VirtualMachine of a connection as soon
// as that connection's client is replaced (a rotated credential).
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache) error {
	name := ControllerName()
	//nolint:staticcheck // crossplane-runtime's event recorder needs the legacy recorder interface.
	recorder := event.NewAPIRecorder(mgr.GetEventRecorderFor(name), o.EventFilterFunctions...)
	poll := o.PollInterval
	if poll <= 0 {
		poll = time.Minute
	}
	c := &connector{
		kube:       mgr.GetClient(),
		secrets:    mgr.GetAPIReader(),
		usage:      resource.NewProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
		clients:    clients,
		vmids:      pve.NewVMIDAllocator(0),
		record:     recorder,
		steadyAge:  poll,
		agentAsked: guest.NewStamps(),
		observed:   guest.NewStamps(),
	}
	opts := []managed.ReconcilerOption{
		managed.WithTypedExternalConnector[*v1alpha1.VirtualMachine](c),
		// No initializer: an empty external name means "no VMID picked
		// yet" (the default one would write metadata.name there).
		managed.WithInitializers(),
		// The VMID is stored before PVE is called, so an interrupted create
		// is always resolvable: never stall on it.
		managed.WithDeterministicExternalName(true),
		// Observe confirms absence itself; a lost VMID race retries at once.
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
	r := managed.NewReconciler(mgr, resource.ManagedKind(v1alpha1.VirtualMachineGroupVersionKind), opts...)

	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.VirtualMachine{}, builder.WithPredicates(resource.DesiredStateChanged()))
	if err := dependents.Watch(mgr, b, &v1alpha1.VirtualMachineList{}, clients); err != nil {
		return errors.Wrap(err, "cannot watch ProxmoxConnection client changes")
	}
	if err := mrstate.Setup(mgr, o, &v1alpha1.VirtualMachineList{}); err != nil {
		return err
	}
	return b.Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// pollSoon reports whether a VirtualMachine is to be observed again within
// seconds although Ready: a task of ours runs, or changes wait for a reboot
// we may make.
func pollSoon(mg resource.Managed) bool {
	cr, ok := mg.(*v1alpha1.VirtualMachine)
	if !ok {
		return false
	}
	rebootDue := cr.Spec.MayReboot() && len(cr.Status.PendingChanges) > 0
	return guest.TaskUnderway(cr.Status.LastTask) || rebootDue
}
