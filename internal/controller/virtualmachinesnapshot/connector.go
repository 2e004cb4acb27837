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
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// connector hands out an external client per reconcile, over the current
// Proxmox client of the guest's connection.
type connector struct {
	kube    client.Client
	fresh   client.Reader // Namespaces, for the connection's allowedNamespaces
	usage   guest.UsageTracker
	clients *pve.Cache
	record  event.Recorder
}

// Connect implements managed.TypedExternalConnector. The usage recorded is
// that of the connection actually used: the VirtualMachine's, for a
// snapshot of one.
func (c *connector) Connect(ctx context.Context, cr *v1alpha1.VirtualMachineSnapshot) (managed.TypedExternalClient[*v1alpha1.VirtualMachineSnapshot], error) {
	t, err := resolveTarget(ctx, c.kube, cr)
	if err != nil {
		return nil, err
	}
	e := &external{kube: c.kube, record: c.record, target: t}
	if t.vmGone {
		// Nothing to ask Proxmox VE: the resource only reports it.
		return e, nil
	}
	// Indexed (dependents.ConnectionOf): a rotation of the guest's
	// connection re-observes the snapshot at once, and while it is down the
	// snapshot waits for it like the guest does.
	cr.Status.ConnectionName = t.connection.Name
	tracked := cr.DeepCopy()
	tracked.Spec.ProviderConfigReference = t.connection
	cl, _, err := guest.Connect(ctx, guest.Readers{Kube: c.kube, Fresh: c.fresh}, c.usage, c.clients, tracked)
	if err != nil {
		return nil, err
	}
	e.cl = cl
	return guest.Explained[*v1alpha1.VirtualMachineSnapshot]{TypedExternalClient: e}, nil
}

// initializer stores the snapshot name as the external name before anything
// is created: spec.snapshotName, else the name derived from metadata.name.
type initializer struct{ kube client.Client }

// Initialize implements managed.Initializer.
func (i initializer) Initialize(ctx context.Context, mg resource.Managed) error {
	cr, ok := mg.(*v1alpha1.VirtualMachineSnapshot)
	if !ok || meta.GetExternalName(cr) != "" {
		return nil
	}
	meta.SetExternalName(cr, cr.DesiredSnapshotName())
	return errors.Wrap(i.kube.Update(ctx, cr), "cannot store the snapshot name as the external name")
}
