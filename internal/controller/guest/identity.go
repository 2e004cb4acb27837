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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// A guest's identity is its VMID, stored as the resource's external name
// before Proxmox VE is ever asked to create anything, plus the ownership
// marker (marker.go) as the last line of the guest's description:
//
//	crossplane: <namespace>/<name> uid=<metadata.uid> kind=<Kind> cluster=<id>
//
// The node is never part of the identity: it is looked up from the VMID on
// every poll, so a migrated guest is followed, not recreated. The rules are
// told in full in internal/controller/virtualmachine/doc.go.

// Ownership is Observe's verdict on the guest at the resource's VMID.
type Ownership int

const (
	// Mine means our marker with this resource's UID.
	Mine Ownership = iota
	// MineNewUID means our marker for this namespace/name with another UID
	// (the object was restored or moved): adopt and rewrite the UID.
	MineNewUID
	// InProgress means a locked create/clone and no marker yet.
	InProgress
	// Imported means no marker, and the user set the external name.
	Imported
	// LostRace means not ours, and we picked the VMID: pick another.
	LostRace
	// Conflict means not ours, and we cannot safely forget the VMID.
	Conflict
)

// MarkerOf is the marker naming o, without a kind or cluster (see
// Identity.MarkerOf for the marker a guest is given).
func MarkerOf(o metav1.Object) Marker {
	return Marker{Namespace: o.GetNamespace(), Name: o.GetName(), UID: string(o.GetUID())}
}

// UserSetExternalName reports whether the external name came from a user:
// we only ever write it inside Create, after the reconciler wrote the
// create-pending annotation.
func UserSetExternalName(o metav1.Object) bool {
	_, pending := o.GetAnnotations()[meta.AnnotationKeyExternalCreatePending]
	return meta.GetExternalName(o) != "" && !pending
}

// Decide applies the ownership rules to the guest at vmid, given its lock
// and description, for the resource o whose marker is me. ownVMID is the
// VMID on which this resource once saw its own marker (its status.vmid; 0 if
// never): that VMID is never given up. A marker naming another management
// cluster is ours all the same here: the external name already points at
// this guest (a restore that kept it, or a user's), so no other resource of
// that cluster is taken from (the cross-cluster rule is for a resource
// without one, see adopt.go).
func Decide(me Marker, o metav1.Object, ownVMID, vmid int, lock, description string) Ownership {
	m, has := ParseMarker(description)
	switch {
	case has && m.SameUID(me):
		return Mine
	case has && m.SameObject(me):
		return MineNewUID
	case !has && (lock == "clone" || lock == "create"):
		return InProgress
	case UserSetExternalName(o) && !has:
		return Imported
	case UserSetExternalName(o):
		return Conflict
	case ownVMID == vmid:
		// We saw our marker here before: it vanished (edited away). Never
		// risk a second guest by forgetting the VMID.
		return Conflict
	}
	return LostRace
}

// VMIDOf parses an external name as a VMID (PVE's range, 100 to 999999999).
func VMIDOf(name string) (int, bool) {
	id, err := strconv.Atoi(name)
	if err != nil || id < 100 || id > 999999999 {
		return 0, false
	}
	return id, true
}

// ForgetExternalName drops the VMID and the create task recorded for it.
func ForgetExternalName(o metav1.Object) {
	meta.RemoveAnnotations(o, meta.AnnotationKeyExternalName, AnnotationCreateTask)
}

// CandidateNodes are the nodes to ask directly for a guest the listing does
// not show: where it was last seen, then the node the spec names.
func CandidateNodes(lastSeen, specNode string) []string {
	var nodes []string
	if lastSeen != "" {
		nodes = append(nodes, lastSeen)
	}
	if specNode != "" && (len(nodes) == 0 || nodes[0] != specNode) {
		nodes = append(nodes, specNode)
	}
	return nodes
}

// Identity finds, claims and gives up the VMID of the resources of one
// guest kind on one connection, for one reconcile.
type Identity struct {
	Kube       client.Client
	Client     Proxmox
	Connection string
	VMIDs      *pve.VMIDAllocator
	Record     event.Recorder
	// Type is the guest type this kind manages.
	Type pve.GuestType
	// Noun names such a guest in messages ("VM").
	Noun string
	// Kind is the resource kind ("VirtualMachine"), Cluster this
	// management cluster's identity: both go into the markers we write.
	Kind, Cluster string
}

// MarkerOf is the marker a guest of o gets: o's namespace, name and UID,
// the identity's kind and this management cluster.
func (id Identity) MarkerOf(o metav1.Object) Marker {
	m := MarkerOf(o)
	m.Kind, m.Cluster = id.Kind, id.Cluster
	return m
}

// Claim returns the resource's VMID, picking one and storing it on the
// resource first when it has none (fresh): no PVE call ever uses a VMID that
// is not already recorded on the resource.
func (id Identity) Claim(ctx context.Context, mg resource.Managed) (vmid int, fresh bool, err error) {
	if vmid, ok := VMIDOf(meta.GetExternalName(mg)); ok {
		id.VMIDs.Hold(id.Connection, vmid)
		return vmid, false, nil
	}
	vmid, err = id.VMIDs.Next(ctx, id.Client, id.Connection)
	if err != nil {
		return 0, false, err
	}
	meta.SetExternalName(mg, strconv.Itoa(vmid))
	if err := id.Kube.Update(ctx, mg); err != nil {
		ForgetExternalName(mg)
		id.VMIDs.Release(id.Connection, vmid)
		return 0, false, errors.Wrap(err, "cannot record the picked VMID on the resource")
	}
	return vmid, true, nil
}

// Location is where Locate found a VMID.
type Location struct {
	Ref pve.GuestRef
	// Row is the guest's /cluster/resources row; nil when a direct read
	// found it.
	Row *pve.Resource
	// Status is status/current when a direct read found the guest.
	Status *pve.GuestStatus
	// Found: PVE has the VMID. Found with an empty Ref.Node means "taken in
	// PVE, place unknown yet".
	Found bool
}

// Locate finds the node of vmid: the connection's /cluster/resources view
// (no older than maxAge) first, then, for a VMID missing from that lagging
// listing, direct reads on nodes, then PVE's cluster-wide VMID list.
func (id Identity) Locate(ctx context.Context, vmid int, maxAge time.Duration, nodes []string) (Location, error) {
	rows, err := id.Client.CachedClusterResources(ctx, maxAge)
	if err != nil {
		return Location{}, err
	}
	for i := range rows {
		if rows[i].VMID != vmid {
			continue
		}
		return Location{Ref: pve.GuestRef{Type: id.Type, Node: rows[i].Node, VMID: vmid}, Row: &rows[i], Found: true}, nil
	}
	return id.confirm(ctx, vmid, nodes)
}

// confirm checks a VMID the listing does not show: on the nodes we expect,
// then in PVE's cluster-wide VMID list, before calling it absent.
func (id Identity) confirm(ctx context.Context, vmid int, nodes []string) (Location, error) {
	for _, node := range nodes {
		ref := pve.GuestRef{Type: id.Type, Node: node, VMID: vmid}
		st, err := id.Client.GuestStatus(ctx, ref)
		if err == nil {
			return Location{Ref: ref, Status: &st, Found: true}, nil
		}
		if !pve.IsGuestNotFound(err) {
			return Location{}, err
		}
	}
	inUse, err := id.Client.VMIDInUse(ctx, vmid)
	if err != nil {
		return Location{}, err
	}
	return Location{Ref: pve.GuestRef{Type: id.Type, VMID: vmid}, Found: inUse}, nil
}

// Vanished handles a guest the listing showed but its node no longer has:
// migrated, or destroyed. Only PVE's VMID list can tell.
func (id Identity) Vanished(ctx context.Context, mg resource.Managed, vmid int) (managed.ExternalObservation, error) {
	inUse, err := id.Client.VMIDInUse(ctx, vmid)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if inUse {
		mg.SetConditions(xpv2.Unavailable().WithMessage(id.Noun + " " + strconv.Itoa(vmid) + " is moving between nodes"))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	return managed.ExternalObservation{ResourceExists: false}, nil
}

// LostRace forgets a VMID someone else's guest took before ours was made,
// persisting that at once (Observe persists only status otherwise), so the
// next Create picks another VMID.
func (id Identity) LostRace(ctx context.Context, mg resource.Managed, vmid int) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	id.Record.Event(mg, event.Normal(ReasonVMIDTaken, "VMID "+strconv.Itoa(vmid)+" was taken by another guest before ours was created; picking another"))
	ForgetExternalName(mg)
	if err := id.Kube.Update(ctx, mg); err != nil {
		return managed.ExternalObservation{}, errors.Wrap(err, "cannot forget a VMID taken by another guest")
	}
	return managed.ExternalObservation{ResourceExists: false}, nil
}

// WrongType handles a guest of another type (has) at the VMID: a race lost
// if we picked the VMID and never saw our marker there (ownVMID), a user
// error otherwise.
func (id Identity) WrongType(ctx context.Context, mg resource.Managed, ownVMID, vmid int, has string) (managed.ExternalObservation, error) {
	if !UserSetExternalName(mg) && ownVMID != vmid {
		return id.LostRace(ctx, mg, vmid)
	}
	if meta.WasDeleted(mg) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	return managed.ExternalObservation{}, errors.Errorf("VMID %d %w: a %s guest, not a %s one", vmid, ErrWrongGuestType, has, id.Type)
}
