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
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/polling"
)

// ControllerName is the name of the VirtualMachineSnapshot controller.
func ControllerName() string {
	return guest.ControllerName(v1alpha1.VirtualMachineSnapshotGroupVersionKind)
}

// Setup adds the VirtualMachineSnapshot controller to mgr, taking Proxmox
// clients from clients. The initializer stores the snapshot name as the
// external name before anything is created.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache, poll polling.Policy) error {
	recorder := guest.Recorder(mgr, o, ControllerName())
	c := &connector{
		kube:    mgr.GetClient(),
		fresh:   mgr.GetAPIReader(),
		usage:   resource.NewProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
		clients: clients,
		record:  recorder,
	}
	return guest.SetupManaged(mgr, o, clients, recorder, guest.ManagedKind[*v1alpha1.VirtualMachineSnapshot]{
		GVK: v1alpha1.VirtualMachineSnapshotGroupVersionKind, Object: &v1alpha1.VirtualMachineSnapshot{}, List: &v1alpha1.VirtualMachineSnapshotList{},
		Polling:   poll,
		Connector: c, Initializers: []managed.Initializer{initializer{kube: mgr.GetClient()}}, PollSoon: pollSoon,
	})
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
