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

package container

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
)

// ControllerName is the name of the Container controller.
func ControllerName() string { return guest.ControllerName(v1alpha1.ContainerGroupVersionKind) }

// Setup adds the Container controller to mgr, taking Proxmox clients from
// clients and new VMIDs from the allocator every guest kind shares (shared);
// secretWatch tells when a passwordFrom Secret must be read again.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache, shared guest.Shared, secretWatch *secrets.Watch) error {
	recorder := guest.Recorder(mgr, o, ControllerName())
	c := &connector{
		Deps:            guest.NewDeps(mgr, o, clients, shared, v1alpha1.ContainerKind, recorder),
		secrets:         secrets.NewMemo(secretWatch, mgr.GetAPIReader()),
		interfacesAsked: guest.NewStamps(),
	}
	// No initializer: an empty external name means "no VMID picked yet".
	return guest.SetupManaged(mgr, o, clients, recorder, guest.ManagedKind[*v1alpha1.Container]{
		GVK: v1alpha1.ContainerGroupVersionKind, Object: &v1alpha1.Container{}, List: &v1alpha1.ContainerList{},
		Polling:   shared.Polling,
		Connector: c, PollSoon: pollSoon,
	})
}

// pollSoon reports whether a Container is to be observed again within
// seconds although Ready: a task of ours runs, or changes wait for a
// restart we may make.
func pollSoon(mg resource.Managed) bool {
	cr, ok := mg.(*v1alpha1.Container)
	if !ok {
		return false
	}
	rebootDue := cr.Spec.MayReboot() && len(cr.Status.PendingChanges) > 0
	return guest.TaskUnderway(cr.Status.LastTask) || rebootDue
}
