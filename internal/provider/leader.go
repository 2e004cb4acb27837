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

package provider

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/leaderelection"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// errLeaseNotRenewed is why a fenced Proxmox VE request was not sent.
var errLeaseNotRenewed = errors.New("this replica has not renewed its leader election lease in time and may no longer be the leader")

// leaseFence is the leader election lock, remembering when this replica
// last wrote it as the holder. Its Check is the Proxmox clients' fence.
//
// Why: controller-runtime stops a replica that lost its lease, but only
// once its renew loop notices. A replica that was frozen (SIGSTOP, a VM
// pause, a long GC) past the lease duration resumes with its reconcilers'
// timers expired and runs them before that; meanwhile another replica
// leads. The other replica takes over no earlier than LeaseDuration after
// the last renewal it saw, and a renewal is seen no earlier than it was
// sent, so a replica whose last successful write started less than
// validity (the renew deadline, shorter than the lease) ago still leads.
type leaseFence struct {
	resourcelock.Interface
	validity time.Duration
	now      func() time.Time

	mu      sync.Mutex
	renewed time.Time // start of the last successful write holding the lease
}

func newLeaseFence(lock resourcelock.Interface, validity time.Duration) *leaseFence {
	return &leaseFence{Interface: lock, validity: validity, now: time.Now}
}

// Create records a successful acquisition.
func (f *leaseFence) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	started := f.now()
	err := f.Interface.Create(ctx, ler)
	f.record(ler, started, err)
	return err
}

// Update records a successful renewal; a release closes the fence.
func (f *leaseFence) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	started := f.now()
	err := f.Interface.Update(ctx, ler)
	f.record(ler, started, err)
	return err
}

func (f *leaseFence) record(ler resourcelock.LeaderElectionRecord, started time.Time, err error) {
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if ler.HolderIdentity == f.Identity() {
		f.renewed = started
	} else {
		f.renewed = time.Time{}
	}
}

// Check is nil while this replica's last write of the lease is younger than
// the validity.
func (f *leaseFence) Check() error {
	f.mu.Lock()
	renewed := f.renewed
	f.mu.Unlock()
	if renewed.IsZero() || f.now().Sub(renewed) >= f.validity {
		return errLeaseNotRenewed
	}
	return nil
}

// newLeaseLock builds the Lease lock controller-runtime would build for
// o, wrapped in a fence. Leader election events are not recorded: the
// manager logs the same transitions.
func newLeaseLock(cfg *rest.Config, o Options) (*leaseFence, error) {
	lock, err := leaderelection.NewResourceLock(cfg, noEvents{}, leaderelection.Options{
		LeaderElection:             true,
		LeaderElectionResourceLock: resourcelock.LeasesResourceLock,
		LeaderElectionID:           LeaderElectionID,
		LeaderElectionNamespace:    o.LeaderElectionNamespace,
		RenewDeadline:              o.RenewDeadline,
	})
	if err != nil {
		return nil, errors.Wrap(err, "cannot build the leader election lock")
	}
	return newLeaseFence(lock, o.RenewDeadline), nil
}

// noEvents is a recorder.Provider whose recorders drop every event.
type noEvents struct{}

func (noEvents) GetEventRecorderFor(string) record.EventRecorder { return noEventRecorder{} }
func (noEvents) GetEventRecorder(string) events.EventRecorder    { return noNewEventRecorder{} }

type noEventRecorder struct{}

func (noEventRecorder) Event(runtime.Object, string, string, string)                  {}
func (noEventRecorder) Eventf(runtime.Object, string, string, string, ...interface{}) {}
func (noEventRecorder) AnnotatedEventf(runtime.Object, map[string]string, string, string, string, ...interface{}) {
}

type noNewEventRecorder struct{}

func (noNewEventRecorder) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...interface{}) {
}
