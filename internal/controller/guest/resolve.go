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
	"strconv"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// Found is a guest Observe located at the resource's VMID, with its
// configuration read and its ownership decided: ours (Mine, MineNewUID) or
// imported (Imported), to be compared with the spec.
type Found struct {
	Ref pve.GuestRef
	// Row is the guest's /cluster/resources row; nil when a direct read
	// found it.
	Row  *pve.Resource
	Cfg  pve.GuestConfig
	Lock string
	Own  Ownership
}

// ListingAge is how old the /cluster/resources view may be for mg: as old as
// its poll cycle once it is settled (Ready, no task of ours running, not
// being deleted), BusyListingAge otherwise. It stamps mg's observation.
func ListingAge(mg resource.Managed, last *v1alpha1.TaskStatus, stamps *Stamps, steady time.Duration) time.Duration {
	// A deletion reads a fresh listing and keeps no clock.
	settled := !meta.WasDeleted(mg) && IsReady(mg) && !TaskUnderway(last)
	return stamps.ListingAge(mg.GetUID(), settled, steady, time.Now())
}

// Resolve reads the configuration of the guest loc found at vmid and decides
// whose it is. It returns the guest when it is ours or imported; otherwise
// (nil) the observation and error are Observe's answer: a guest of another
// type, one not placed yet, one that vanished, one being created, a VMID
// lost to someone else's guest, or a conflict. ownVMID is the resource's
// status.vmid, set here once our marker is seen. current remembers the
// status/current a direct read made.
func (id Identity) Resolve(ctx context.Context, mg resource.Managed, ownVMID *int32, vmid int, loc Location, current *CurrentStatus) (*Found, managed.ExternalObservation, error) {
	ref, row := loc.Ref, loc.Row
	current.Remember(loc.Status)
	if row != nil && row.Type != "" && row.Type != string(id.Type) {
		obs, err := id.WrongType(ctx, mg, int(*ownVMID), vmid, row.Type)
		return nil, obs, err
	}
	if ref.Node == "" {
		// Taken cluster-wide but not placed yet in our view: wait.
		mg.SetConditions(xpv2.Creating())
		return nil, managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	cfg, err := id.Client.GuestPending(ctx, ref)
	if pve.IsGuestNotFound(err) {
		obs, err := id.Vanished(ctx, mg, vmid)
		return nil, obs, err
	}
	if err != nil {
		return nil, managed.ExternalObservation{}, err
	}
	f := &Found{Ref: ref, Row: row, Cfg: cfg, Lock: pve.Lock(cfg)}
	if f.Lock == "" && row != nil {
		f.Lock = row.Lock
	}
	if err := id.decide(ctx, mg, int(*ownVMID), vmid, f); err != nil {
		return nil, managed.ExternalObservation{}, err
	}
	return id.verdict(ctx, mg, ownVMID, vmid, f)
}

// decide sets f.Own. Forgetting the VMID is the one irreversible verdict:
// before it, status/current (which always carries the lock) confirms the
// guest is not our clone or create still in progress.
func (id Identity) decide(ctx context.Context, mg resource.Managed, ownVMID, vmid int, f *Found) error {
	f.Own = Decide(id.MarkerOf(mg), mg, ownVMID, vmid, f.Lock, pve.Description(f.Cfg))
	if f.Own != LostRace || f.Lock != "" {
		return nil
	}
	st, err := id.Client.GuestStatus(ctx, f.Ref)
	if err != nil && !pve.IsGuestNotFound(err) {
		return err
	}
	f.Lock = st.Lock
	f.Own = Decide(id.MarkerOf(mg), mg, ownVMID, vmid, f.Lock, pve.Description(f.Cfg))
	return nil
}

// verdict acts on f.Own: the guest is returned when it is to be compared
// with the spec.
func (id Identity) verdict(ctx context.Context, mg resource.Managed, ownVMID *int32, vmid int, f *Found) (*Found, managed.ExternalObservation, error) {
	switch f.Own {
	case InProgress:
		mg.SetConditions(xpv2.Creating().WithMessage("Proxmox VE is creating " + id.Noun + " " + strconv.Itoa(vmid)))
		return nil, managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	case LostRace:
		obs, err := id.LostRace(ctx, mg, vmid)
		return nil, obs, err
	case Conflict:
		if meta.WasDeleted(mg) {
			return nil, managed.ExternalObservation{ResourceExists: false}, nil
		}
		return nil, managed.ExternalObservation{}, errors.Errorf("%s %d %w (%q): refusing to manage or recreate it", id.Noun, vmid, ErrForeignMarker, id.MarkerOf(mg).String())
	case MineNewUID:
		if ok, err := id.MayTakeOver(ctx, mg, f); !ok || err != nil {
			return nil, managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, err
		}
		*ownVMID = int32(vmid) //nolint:gosec // VMIDOf bounds it
	case Mine:
		*ownVMID = int32(vmid) //nolint:gosec // VMIDOf bounds it
	case Imported:
		// The user's external name is the VMID; the guest is observed like
		// our own and gets our marker when updates are allowed.
	}
	return f, managed.ExternalObservation{}, nil
}
