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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

const (
	// notReadyPoll is how soon a resource that is not Ready (or has a task
	// running) is observed again.
	notReadyPoll = 3 * time.Second
	// busyResourcesAge bounds how old the /cluster/resources view may be
	// for a resource with work under way.
	busyResourcesAge = 2 * time.Second
	// templateResourcesAge bounds the view used to find a template by name.
	templateResourcesAge = 30 * time.Second
	// shutdownTimeout is how long a guest gets to power off on deletion
	// before PVE stops it.
	shutdownTimeout = 60
	// rebootTimeout bounds the guest's shutdown inside a reboot.
	rebootTimeout = 120
	// maxSteadyAgeFactor caps a Ready resource's listing age at this many
	// poll intervals, however slow its cycle.
	maxSteadyAgeFactor = 5
	// agentRetry spaces guest agent queries while the IP is unknown.
	agentRetry = 30 * time.Second
	// maxCreateAttempts bounds the VMIDs one Create tries when PVE says
	// they are taken.
	maxCreateAttempts = 5
)

// usageTracker records that a managed resource uses its ProxmoxConnection.
type usageTracker interface {
	Track(ctx context.Context, mg resource.ModernManaged) error
}

// connector hands out an external client per reconcile, over the current
// Proxmox client of the resource's connection.
type connector struct {
	kube    client.Client
	secrets client.Reader // uncached: Secrets never enter an informer
	usage   usageTracker
	clients *pve.Cache
	vmids   *pve.VMIDAllocator
	record  event.Recorder
	// steadyAge is how old the /cluster/resources view may be for a Ready
	// resource with nothing under way: the poll interval, so a connection
	// reads it about once per poll whatever the number of VMs.
	steadyAge time.Duration
	agent     *agentThrottle
	clock     *pollClock
}

// Connect implements managed.TypedExternalConnector.
func (c *connector) Connect(ctx context.Context, cr *v1alpha1.VirtualMachine) (managed.TypedExternalClient[*v1alpha1.VirtualMachine], error) {
	if err := c.usage.Track(ctx, cr); err != nil {
		return nil, errors.Wrap(err, "cannot track ProxmoxConnection usage")
	}
	ref := cr.GetProviderConfigReference()
	cl, err := c.clients.Get(ref.Name)
	if err != nil {
		return nil, errors.Wrap(err, "cannot get a Proxmox VE client")
	}
	return &external{
		kube: c.kube, secrets: c.secrets, cl: cl, connection: ref.Name, vmids: c.vmids,
		record: c.record, steadyAge: c.steadyAge, agent: c.agent, clock: c.clock,
	}, nil
}

// agentThrottle remembers when the guest agent of each resource was last
// asked, so a guest without a running agent costs one request per
// agentRetry, not one per poll.
type agentThrottle struct {
	mu    sync.Mutex
	asked map[types.UID]time.Time
}

func newAgentThrottle() *agentThrottle { return &agentThrottle{asked: map[types.UID]time.Time{}} }

// due reports whether uid's agent may be asked now, and records it.
func (a *agentThrottle) due(uid types.UID, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if last, ok := a.asked[uid]; ok && now.Sub(last) < agentRetry {
		return false
	}
	a.asked[uid] = now
	return true
}

// reset makes the agent of uid due again (after a start or reboot).
func (a *agentThrottle) reset(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.asked, uid)
}

// pollClock remembers when each resource was last observed. A Ready
// resource accepts a /cluster/resources view as old as its own observation
// cycle (the poll interval, or longer when the global reconcile rate
// stretches it), so a connection reads the listing about once per cycle
// whatever the number of VMs.
type pollClock struct {
	mu   sync.Mutex
	last map[types.UID]time.Time
}

func newPollClock() *pollClock { return &pollClock{last: map[types.UID]time.Time{}} }

// since returns how long ago uid was last observed (0 the first time) and
// records now.
func (p *pollClock) since(uid types.UID, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	last, ok := p.last[uid]
	p.last[uid] = now
	if !ok {
		return 0
	}
	return now.Sub(last)
}

// forget drops uid (its resource is going away).
func (p *pollClock) forget(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, uid)
}
