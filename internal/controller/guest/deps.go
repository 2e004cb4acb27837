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

package guest

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/polling"
)

// Deps is what the connector of every guest kind holds across reconciles;
// a kind's connector embeds it and adds what is its own (its Secret reader,
// its per-resource throttles).
type Deps struct {
	Kube client.Client
	// Fresh reads straight from the API server (see Readers).
	Fresh client.Reader
	// Usage records which resources use a ProxmoxConnection.
	Usage UsageTracker
	// Clients holds each connection's current Proxmox client.
	Clients *pve.Cache
	// VMIDs is the allocator every guest kind of the process shares.
	VMIDs  *pve.VMIDAllocator
	Record event.Recorder
	// SteadyAge is how old the /cluster/resources view may be for a Ready
	// resource with nothing under way: the poll interval, so a connection
	// reads it about once per poll whatever the number of guests.
	SteadyAge time.Duration
	// Observed is when each resource was last observed.
	Observed *Stamps
	// Kind is the resource kind, Cluster this management cluster's
	// identity: both go into the markers the kind writes.
	Kind, Cluster string
}

// Shared is what the controllers of every guest kind in one process share.
type Shared struct {
	// VMIDs is the one VMID allocator (QEMU and LXC guests take VMIDs from
	// one cluster-wide range).
	VMIDs *pve.VMIDAllocator
	// Cluster identifies this management cluster in markers (see
	// ClusterIdentity).
	Cluster string
	// Polling spaces the checks of settled resources.
	Polling polling.Policy
}

// NewDeps returns the Deps of the controller of kind in mgr, recording
// events with record and taking new VMIDs from shared's allocator.
func NewDeps(mgr ctrl.Manager, o controller.Options, clients *pve.Cache, shared Shared, kind string, record event.Recorder) Deps {
	return Deps{
		Kube:      mgr.GetClient(),
		Fresh:     mgr.GetAPIReader(),
		Usage:     resource.NewProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
		Clients:   clients,
		VMIDs:     shared.VMIDs,
		Kind:      kind,
		Cluster:   shared.Cluster,
		Record:    record,
		SteadyAge: PollIntervalOf(o),
		Observed:  NewStamps(),
	}
}

// Connect records that mg uses its ProxmoxConnection and returns the
// connection's current client and name (see Connect).
func (d *Deps) Connect(ctx context.Context, mg resource.ModernManaged) (*pve.Client, string, error) {
	return Connect(ctx, Readers{Kube: d.Kube, Fresh: d.Fresh}, d.Usage, d.Clients, mg)
}

// Identity is how one reconcile, speaking to connection through cl, finds,
// claims and gives up the VMIDs of guests of type t (called noun in
// messages).
func (d *Deps) Identity(cl Proxmox, connection string, t pve.GuestType, noun string) Identity {
	return Identity{Kube: d.Kube, Client: cl, Connection: connection, VMIDs: d.VMIDs, Record: d.Record, Type: t, Noun: noun, Kind: d.Kind, Cluster: d.Cluster}
}

// Observer runs the part of Observe every guest kind shares for id; the
// per-resource stamps in forget go with a deleted resource, as Observed's do.
func (d *Deps) Observer(id Identity, forget ...*Stamps) Observer {
	return Observer{Identity: id, Observed: d.Observed, SteadyAge: d.SteadyAge, Forget: forget}
}
