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

// Package container is the Container controller: a Proxmox VE LXC container
// cloned from a container template (template.name), created from a
// template archive (template.ostemplate) or from an OCI image pulled into
// file-based storage (template.image). Identity, crash safety, import and
// deletion are VirtualMachine's, from the shared guest layer; this package
// keeps what is the container's own: the spec it translates, the image
// pull, and replacing the container when its source changes.
package container

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
)

const (
	// shutdownTimeout is how long a container gets to power off before it
	// is destroyed, PVE stopping it afterwards.
	shutdownTimeout = 60
	// rebootTimeout bounds the container's shutdown inside a reboot.
	rebootTimeout = 120
	// interfacesRetry spaces interface queries while no address is known.
	interfacesRetry = 30 * time.Second
)

// connector hands out an external client per reconcile, over the current
// Proxmox client of the resource's connection.
type connector struct {
	guest.Deps
	// secrets reads passwordFrom Secrets, again only when they changed.
	secrets *secrets.Memo
	// interfacesAsked throttles interface queries while no address is known.
	interfacesAsked *guest.Stamps
}

// Connect implements managed.TypedExternalConnector.
func (c *connector) Connect(ctx context.Context, cr *v1alpha1.Container) (managed.TypedExternalClient[*v1alpha1.Container], error) {
	cl, connection, err := c.Deps.Connect(ctx, cr)
	if err != nil {
		return nil, err
	}
	return guest.Explained[*v1alpha1.Container]{TypedExternalClient: &external{connector: c, cl: cl, connection: connection}}, nil
}
