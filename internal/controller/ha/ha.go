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

// Package ha keeps a guest's Proxmox VE HA resource as its spec.ha asks, for
// every guest kind: created when missing, corrected when changed in Proxmox
// VE, removed when spec.ha is dropped and before the guest is deleted.
package ha

import (
	"context"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// Client is what this package asks of Proxmox VE (*pve.Client answers).
type Client interface {
	HAResourceOf(ctx context.Context, ref pve.GuestRef) (pve.HAResource, bool, error)
	CreateHAResource(ctx context.Context, ref pve.GuestRef, r pve.HAResource) error
	UpdateHAResource(ctx context.Context, ref pve.GuestRef, r pve.HAResource) error
	DeleteHAResource(ctx context.Context, ref pve.GuestRef) error
}

// Want is the HA resource spec asks for, PVE's defaults filled in for what it
// leaves unset.
func Want(spec *v1alpha1.GuestHA) pve.HAResource {
	r := pve.HADefaults()
	r.State = string(spec.StateOrDefault())
	if spec.MaxRestart != nil {
		r.MaxRestart = int(*spec.MaxRestart)
	}
	if spec.MaxRelocate != nil {
		r.MaxRelocate = int(*spec.MaxRelocate)
	}
	if spec.Failback != nil {
		r.Failback = *spec.Failback
	}
	return r
}

// Observation is what Observe learnt of the guest's HA resource.
type Observation struct {
	// Asked: spec.ha is set; Want is then what it asks for.
	Asked bool
	Want  pve.HAResource
	// Found: the guest is an HA resource; Have is it.
	Found bool
	Have  pve.HAResource
}

// Observe reads the guest's HA resource when spec.ha is set or status says
// there was one (spec.ha was just dropped), and records it in *status. A
// guest that never had spec.ha costs no request.
func Observe(ctx context.Context, cl Client, ref pve.GuestRef, spec *v1alpha1.GuestHA, status **v1alpha1.GuestHAStatus) (Observation, error) {
	if spec == nil && *status == nil {
		return Observation{}, nil
	}
	have, found, err := cl.HAResourceOf(ctx, ref)
	if err != nil {
		return Observation{}, err
	}
	o := Observation{Asked: spec != nil, Found: found, Have: have}
	if o.Asked {
		o.Want = Want(spec)
	}
	switch {
	case found:
		*status = &v1alpha1.GuestHAStatus{SID: pve.HASID(ref), State: have.State}
	case o.Asked:
		*status = &v1alpha1.GuestHAStatus{SID: pve.HASID(ref)}
	default:
		*status = nil
	}
	return o, nil
}

// Converged reports whether the HA resource is as the spec asks: there with
// the options asked for, or absent when spec.ha is not set.
func (o Observation) Converged() bool {
	if o.Asked {
		return o.Found && o.Have == o.Want
	}
	return !o.Found
}

// The reasons of the events that say what Apply changed.
const (
	ReasonHACreated   event.Reason = "HAResourceCreated"
	ReasonHACorrected event.Reason = "HAResourceCorrected"
	ReasonHARemoved   event.Reason = "HAResourceRemoved"
)

// Apply creates, corrects or removes the HA resource so it converges. The
// event it returns says what it changed; a correction names what Proxmox VE
// had, so a change made there by hand is visible on the resource.
func (o Observation) Apply(ctx context.Context, cl Client, ref pve.GuestRef) (event.Event, error) {
	sid := pve.HASID(ref)
	switch {
	case o.Asked && !o.Found:
		if err := cl.CreateHAResource(ctx, ref, o.Want); err != nil {
			return event.Event{}, err
		}
		return event.Normal(ReasonHACreated, "made the guest HA resource "+sid+" ("+describe(o.Want)+")"), nil
	case o.Asked && o.Have != o.Want:
		if err := cl.UpdateHAResource(ctx, ref, o.Want); err != nil {
			return event.Event{}, err
		}
		return event.Normal(ReasonHACorrected, "set HA resource "+sid+" back to "+describe(o.Want)+" (Proxmox VE had "+describe(o.Have)+")"), nil
	case !o.Asked && o.Found:
		if err := cl.DeleteHAResource(ctx, ref); err != nil {
			return event.Event{}, err
		}
		return event.Normal(ReasonHARemoved, "removed HA resource "+sid+": spec.ha is not set"), nil
	}
	return event.Event{}, nil
}

// describe names an HA resource's options as PVE's API does.
func describe(r pve.HAResource) string {
	return fmt.Sprintf("state=%s max_restart=%d max_relocate=%d failback=%t", r.State, r.MaxRestart, r.MaxRelocate, r.Failback)
}

// Release removes the guest from HA before it is deleted: a guest PVE's HA
// manages would be started again (or relocated) while the provider shuts it
// down, and destroy refuses it without purge. It reports whether it removed
// one, which is then this reconcile's step.
func Release(ctx context.Context, cl Client, ref pve.GuestRef, spec *v1alpha1.GuestHA, status **v1alpha1.GuestHAStatus) (bool, error) {
	if spec == nil && *status == nil {
		return false, nil
	}
	_, found, err := cl.HAResourceOf(ctx, ref)
	if err != nil {
		return false, err
	}
	if !found {
		*status = nil
		return false, nil
	}
	if err := cl.DeleteHAResource(ctx, ref); err != nil {
		return false, err
	}
	*status = nil
	return true, nil
}

// PowerWant is the power the provider keeps the guest in, given what the spec
// alone would ask (running, stopped). While HA decides the guest's power
// (any state but ignored), the provider only starts a guest HA keeps started
// (PVE routes that start through HA, which agrees) and never stops one: a
// direct stop would set the resource's state to stopped, and the provider
// would then fight HA over it.
func PowerWant(spec *v1alpha1.GuestHA, running, stopped bool) (keepRunning, keepStopped bool) {
	if !spec.DrivesPower() {
		return running, stopped
	}
	return spec.StateOrDefault() == v1alpha1.HAStateStarted, false
}
