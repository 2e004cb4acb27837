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

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
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
	guest.Deps
	// secrets reads passwordFrom Secrets, again only when they changed.
	secrets *secrets.Memo
	// agentAsked throttles guest agent queries to one per agentRetry per
	// resource while the IP is unknown.
	agentAsked *guest.Stamps
}

// Connect implements managed.TypedExternalConnector.
func (c *connector) Connect(ctx context.Context, cr *v1alpha1.VirtualMachine) (managed.TypedExternalClient[*v1alpha1.VirtualMachine], error) {
	cl, connection, err := c.Deps.Connect(ctx, cr)
	if err != nil {
		return nil, err
	}
	return guest.Explained[*v1alpha1.VirtualMachine]{TypedExternalClient: &external{connector: c, cl: cl, connection: connection}}, nil
}
