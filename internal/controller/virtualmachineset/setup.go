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

package virtualmachineset

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
	"github.com/kubemox/provider-proxmox/internal/controller/polling"
)

// ControllerName is the name of the VirtualMachineSet controller.
const ControllerName = "virtualmachineset"

// Setup adds the VirtualMachineSet controller to mgr: it reconciles a set
// when the set or one of its VirtualMachines changes (a VM becoming Ready
// moves readyReplicas). clients are the connections' Proxmox clients, read
// to place the VMs of a set with spec.placement.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache) error {
	//nolint:staticcheck // crossplane-runtime's event recorder needs the legacy recorder interface.
	recorder := event.NewAPIRecorder(mgr.GetEventRecorderFor(ControllerName), o.EventFilterFunctions...)
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.VirtualMachineSet{}).
		Owns(&v1alpha1.VirtualMachine{}).
		Complete(newReconciler(mgr.GetClient(), mgr.GetAPIReader(), recorder, changelog.NewRecorder(o, v1alpha1.VirtualMachineSetKind), clients))
}

// newReconciler is the set reconciler as the controller runs it: a paused
// set (crossplane.io/paused) is left alone, and a conflict (a status written
// from a stale read) is requeued, not logged as a Reconciler error with a
// stack trace. Every VirtualMachine it creates, updates or deletes is sent
// to changes. fresh reads Namespaces (see guest.Readers); clients are read to place VMs (spec.placement).
func newReconciler(kube client.Client, fresh client.Reader, record event.Recorder, changes changelog.Recorder, clients *pve.Cache) reconcile.Reconciler {
	newSet := func() polling.Object { return &v1alpha1.VirtualMachineSet{} }
	r := &Reconciler{kube: kube, fresh: fresh, record: record, changes: changes, clients: clients}
	return errors.WithSilentRequeueOnConflict(polling.UnlessPaused(kube, newSet, record, r))
}
