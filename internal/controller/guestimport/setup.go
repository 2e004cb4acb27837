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

package guestimport

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/polling"
)

// ControllerName is the name of the GuestImport controller.
const ControllerName = "guestimport"

// Setup adds the GuestImport controller to mgr, with the index of
// VirtualMachines and Containers by the guest they name
// (guest.IndexGuestKey); it is set up once both kinds are served too.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache) error {
	for _, kind := range []client.Object{&v1alpha1.VirtualMachine{}, &v1alpha1.Container{}} {
		if err := guest.IndexByGuest(mgr, kind); err != nil {
			return err
		}
	}
	//nolint:staticcheck // crossplane-runtime's event recorder needs the legacy recorder interface.
	recorder := event.NewAPIRecorder(mgr.GetEventRecorderFor(ControllerName), o.EventFilterFunctions...)
	r := &Reconciler{
		kube: mgr.GetClient(), fresh: mgr.GetAPIReader(), clients: clients, record: recorder, now: time.Now,
		changes: changelog.NewRecorder(o, v1alpha1.GuestImportKind),
	}
	newImport := func() polling.Object { return &v1alpha1.GuestImport{} }
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.GuestImport{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, polling.PauseChanged()))).
		Complete(errors.WithSilentRequeueOnConflict(polling.UnlessPaused(mgr.GetClient(), newImport, recorder, r))) // a conflict is requeued, not logged as an error
}
