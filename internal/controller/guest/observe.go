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

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// Observation is what Observe learnt about a guest that every kind keeps
// for Update and Delete of the same reconcile; a kind embeds it and adds
// its own (the spec it wants, its plan).
type Observation struct {
	Ref    pve.GuestRef
	Cfg    pve.GuestConfig
	Own    Ownership
	Locked string
	// Running: the guest runs.
	Running bool
	// TaskRunning: a task of ours runs on the guest.
	TaskRunning bool
	// WasReady: the resource was Ready before this observation.
	WasReady bool
	// SpecChanged: the spec changed since the last successful sync, so a
	// difference is a change asked for, not drift.
	SpecChanged bool
	// NeedMarker: our marker is to be written (an import now managed, or a
	// new UID).
	NeedMarker bool
	// Need is what the power state needs.
	Need        PowerNeeds
	PendingKeys []string
	// Current is status/current, read at most once per reconcile: Update
	// acts on what Observe read rather than asking PVE again.
	Current CurrentStatus
}

// Busy reports whether PVE works on the guest (a lock or our task).
func (o *Observation) Busy() bool { return o.Locked != "" || o.TaskRunning }

// Actionable reports whether Update and Delete may act on what Observe saw:
// an owned guest placed on a node, with nothing under way.
func (o *Observation) Actionable() bool {
	return o.Ref.Node != "" && o.Own != InProgress && !o.Busy()
}

// PowerDrift reports whether the guest's power state is not the one the
// spec asks for.
func (o *Observation) PowerDrift() bool { return o.Need.Start || o.Need.Stop }

// Tracked is what a guest resource records of its guest, for Observe.
type Tracked struct {
	// VMID is status.vmid, set once our marker is seen.
	VMID *int32
	// LastTask is status.lastTask.
	LastTask **v1alpha1.TaskStatus
	// LastNode is where the guest was last seen; SpecNode the spec's node.
	LastNode, SpecNode string
	// Protected is spec.deletionProtection.
	Protected bool
	// Adopt is what a resource without an external name looks for before
	// it creates anything (adopt.go); nil: it looks for nothing.
	Adopt *AdoptTarget
}

// Observer runs the part of Observe every guest kind shares.
type Observer struct {
	Identity
	// Observed stamps each resource's observations (the listing age).
	Observed *Stamps
	// SteadyAge is the listing age a settled resource accepts.
	SteadyAge time.Duration
	// Forget are per-resource stamps dropped with a deleted resource.
	Forget []*Stamps
}

// Begin finds the guest at mg's VMID, decides whose it is and follows our
// last task, filling o. It returns the guest's listing row (nil when a
// direct read found it) and next true when the guest is ours or imported
// and to be compared with the spec; otherwise obs and err are Observe's
// answer (no VMID yet, kept by deletion protection, absent, not ours, or
// being deleted).
func (ob Observer) Begin(ctx context.Context, mg resource.Managed, t Tracked, o *Observation) (*pve.Resource, bool, managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		// Per-resource memory goes with the resource, whichever way it is
		// deleted (protected, lost, or destroyed).
		ob.Observed.Forget(mg.GetUID())
		for _, s := range ob.Forget {
			s.Forget(mg.GetUID())
		}
	}
	name, obs, err := ob.externalName(ctx, mg, t.Adopt)
	if name == "" {
		return nil, false, obs, err
	}
	vmid, ok := VMIDOf(name)
	if !ok {
		return nil, false, managed.ExternalObservation{}, errors.Errorf("external name %q is not a VMID", name)
	}
	if KeptByProtection(ob.Record, mg, t.Protected, ob.Noun+" "+name) {
		return nil, false, managed.ExternalObservation{ResourceExists: false}, nil
	}
	o.WasReady = IsReady(mg)
	o.SpecChanged = mg.GetCondition(xpv2.TypeSynced).ObservedGeneration != mg.GetGeneration()
	loc, err := ob.Locate(ctx, vmid, ListingAge(mg, *t.LastTask, ob.Observed, ob.SteadyAge), CandidateNodes(t.LastNode, t.SpecNode))
	if err != nil || !loc.Found {
		return nil, false, managed.ExternalObservation{ResourceExists: loc.Found && err == nil}, err
	}
	found, obs, err := ob.Resolve(ctx, mg, t.VMID, vmid, loc, &o.Current)
	if found == nil {
		return nil, false, obs, err
	}
	o.Ref, o.Cfg, o.Locked, o.Own = found.Ref, found.Cfg, found.Lock, found.Own
	FollowCreateTask(mg, t.LastTask)
	running, err := RefreshTask(ctx, ob.Client, ob.Record, mg, *t.LastTask)
	o.TaskRunning = running
	if err != nil {
		return nil, false, managed.ExternalObservation{}, err
	}
	if meta.WasDeleted(mg) {
		return nil, false, managed.ExternalObservation{ResourceExists: true}, nil
	}
	return found.Row, true, managed.ExternalObservation{}, nil
}

// externalName is mg's external name; for a resource without one, the VMID
// of the guest it adopts (AdoptExisting). Without either, obs and err are
// Observe's answer: absent (Create runs), or existing when mg is to create
// nothing and wait.
func (ob Observer) externalName(ctx context.Context, mg resource.Managed, adopt *AdoptTarget) (string, managed.ExternalObservation, error) {
	name := meta.GetExternalName(mg)
	if name != "" || adopt == nil || meta.WasDeleted(mg) {
		return name, managed.ExternalObservation{ResourceExists: false}, nil
	}
	adopted, wait, err := ob.AdoptExisting(ctx, mg, *adopt)
	switch {
	case err != nil:
		return "", managed.ExternalObservation{}, err
	case wait:
		return "", managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	case adopted:
		return meta.GetExternalName(mg), managed.ExternalObservation{}, nil
	}
	return "", managed.ExternalObservation{ResourceExists: false}, nil
}

// Observe runs Begin, then owned with the guest's listing row when the
// guest is ours or imported and to be compared with the spec. A guest that
// is gone from its node by the time owned reads it again (a migration
// ending between two reads, or a delete) is handled as a vanished one: moving
// between nodes when its VMID is still in use, absent otherwise.
func (ob Observer) Observe(ctx context.Context, mg resource.Managed, t Tracked, o *Observation, owned func(row *pve.Resource) (managed.ExternalObservation, error)) (managed.ExternalObservation, error) {
	row, next, obs, err := ob.Begin(ctx, mg, t, o)
	if !next {
		return obs, err
	}
	obs, err = owned(row)
	if pve.IsGuestNotFound(err) {
		return ob.Vanished(ctx, mg, o.Ref.VMID)
	}
	return obs, err
}

// Adopted says on obj that our marker was written into the guest's
// description.
func (ob Observer) Adopted(obj resource.Managed) {
	ob.Record.Event(obj, event.Normal(ReasonAdopted, "wrote this resource's marker into the "+ob.Noun+"'s description"))
}
