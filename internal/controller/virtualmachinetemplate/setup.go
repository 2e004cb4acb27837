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

package virtualmachinetemplate

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// ControllerName is the name of the VirtualMachineTemplate controller.
func ControllerName() string {
	return managed.ControllerName(v1alpha1.VirtualMachineTemplateGroupKind)
}

// Setup adds the VirtualMachineTemplate controller to mgr, taking Proxmox
// clients from clients and new VMIDs from the allocator every guest kind
// shares.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache, shared guest.Shared) error {
	recorder := guest.Recorder(mgr, o, ControllerName())
	c := &connector{Deps: guest.NewDeps(mgr, o, clients, shared, v1alpha1.VirtualMachineTemplateKind, recorder), secrets: mgr.GetAPIReader()}
	// No initializer: an empty external name means "no VMID picked yet".
	return guest.SetupManaged(mgr, o, clients, recorder, guest.ManagedKind[*v1alpha1.VirtualMachineTemplate]{
		GVK: v1alpha1.VirtualMachineTemplateGroupVersionKind, Object: &v1alpha1.VirtualMachineTemplate{}, List: &v1alpha1.VirtualMachineTemplateList{},
		Polling:   shared.Polling,
		Connector: c, PollSoon: func(resource.Managed) bool { return false },
	})
}

// Proxmox is what the controller asks of Proxmox VE.
type Proxmox interface {
	guest.Proxmox
	CreateGuest(ctx context.Context, ref pve.GuestRef, params map[string]string) (string, error)
	ConvertToTemplate(ctx context.Context, ref pve.GuestRef) (string, error)
	GuestPending(ctx context.Context, ref pve.GuestRef) (pve.GuestConfig, error)
	StorageContent(ctx context.Context, node, storage string) ([]string, error)
	VolumePath(ctx context.Context, node, volid string) (string, error)
	MayImportPaths() bool
	CheckPrerequisites(ctx context.Context, p pve.Prerequisites) error
	guest.TaskLogReader
}

var _ Proxmox = (*pve.Client)(nil)

// connector hands out an external client per reconcile.
type connector struct {
	guest.Deps
	secrets client.Reader // uncached: Secrets never enter an informer
}

// Connect implements managed.TypedExternalConnector.
func (c *connector) Connect(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate) (managed.TypedExternalClient[*v1alpha1.VirtualMachineTemplate], error) {
	cl, connection, err := c.Deps.Connect(ctx, cr)
	if err != nil {
		return nil, err
	}
	return guest.Explained[*v1alpha1.VirtualMachineTemplate]{TypedExternalClient: newExternal(c.Kube, c.secrets, cl, c.Identity(cl, connection, pve.QEMU, "VM"), c.Record)}, nil
}

// listingAge bounds the /cluster/resources view used to find the template.
const listingAge = 5 * time.Second

func newExternal(kube client.Client, secrets client.Reader, cl Proxmox, id guest.Identity, rec event.Recorder) *external {
	return &external{kube: kube, secrets: secrets, cl: cl, record: rec, id: id}
}
