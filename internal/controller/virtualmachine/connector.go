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
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
)

const (
	// shutdownTimeout is how long a guest gets to power off on deletion
	// before PVE stops it.
	shutdownTimeout = 60
	// rebootTimeout bounds the guest's shutdown inside a reboot.
	rebootTimeout = 120
	// agentRetry spaces guest agent queries while the IP is unknown.
	agentRetry = 30 * time.Second
)

// connector hands out an external client per reconcile, over the current
// Proxmox client of the resource's connection.
type connector struct {
	kube client.Client
	// secrets reads passwordFrom Secrets, again only when they changed.
	secrets *secrets.Memo
	usage   guest.UsageTracker
	clients *pve.Cache
	vmids   *pve.VMIDAllocator
	record  event.Recorder
	// steadyAge is how old the /cluster/resources view may be for a Ready
	// resource with nothing under way: the poll interval, so a connection
	// reads it about once per poll whatever the number of VMs.
	steadyAge time.Duration
	// agentAsked throttles guest agent queries to one per agentRetry per
	// resource while the IP is unknown.
	agentAsked *guest.Stamps
	// observed is when each resource was last observed.
	observed *guest.Stamps
}

// Connect implements managed.TypedExternalConnector.
func (c *connector) Connect(ctx context.Context, cr *v1alpha1.VirtualMachine) (managed.TypedExternalClient[*v1alpha1.VirtualMachine], error) {
	cl, connection, err := guest.Connect(ctx, c.usage, c.clients, cr)
	if err != nil {
		return nil, err
	}
	return guest.Explained[*v1alpha1.VirtualMachine]{TypedExternalClient: &external{
		kube: c.kube, secrets: c.secrets, cl: cl, connection: connection, vmids: c.vmids,
		record: c.record, steadyAge: c.steadyAge, agentAsked: c.agentAsked, observed: c.observed,
	}}, nil
}
