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
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// ControllerName is the name of the Container controller.
func ControllerName() string { return managed.ControllerName(v1alpha1.ContainerGroupKind) }

// Setup adds the Container controller to mgr, taking Proxmox clients from
// clients.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache) error {
	return guest.Setup(mgr, o, clients, guest.Kind[*v1alpha1.Container]{
		Name:             ControllerName(),
		GroupVersionKind: v1alpha1.ContainerGroupVersionKind,
		Object:           &v1alpha1.Container{},
		List:             &v1alpha1.ContainerList{},
		Connector: func(rec event.Recorder, poll time.Duration) managed.TypedExternalConnector[*v1alpha1.Container] {
			return &connector{
				kube:            mgr.GetClient(),
				secrets:         mgr.GetAPIReader(),
				usage:           resource.NewProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
				clients:         clients,
				vmids:           pve.NewVMIDAllocator(0),
				record:          rec,
				steadyAge:       poll,
				interfacesAsked: guest.NewStamps(),
				observed:        guest.NewStamps(),
			}
		},
		PollSoon: pollSoon,
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
