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
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// A resource without an external name has no guest yet, as far as it
// knows. Before it creates one, it looks for a guest marked by its own kind,
// namespace and name: its object was deleted with deletionPolicy Orphan (or
// management policies without Delete) and applied again, or its management
// cluster was rebuilt. Found, such a guest is adopted (AdoptionVerdict) and
// its marker rewritten with the new UID by Update; nothing is created.

// ReasonAdoptionRequired is the event of a resource that found a guest of
// another management cluster it may not adopt.
const ReasonAdoptionRequired event.Reason = "AdoptionRequired"

// Adoption is what to do with a guest marked by the same kind, namespace and
// name as the resource looking for one.
type Adoption int

const (
	// CreateAnew adopts nothing: a guest is created (the override says so).
	CreateAnew Adoption = iota
	// Adopt the guest.
	Adopt
	// WaitForOptIn creates nothing: the guest is another management
	// cluster's, and no opt-in lets us take it.
	WaitForOptIn
)

// ClusterOf is how policies and messages name the cluster of a marker.
func ClusterOf(m Marker) string {
	if m.Cluster == "" {
		return v1alpha1.UnknownCluster
	}
	return m.Cluster
}

// AdoptionVerdict decides whether the resource whose marker is me adopts
// the guest marked found (same kind, namespace and name), given its
// connection's policy (nil: none) and its proxmox.alperen.cloud/adopt
// annotation (override: "true", "false" or ""). A guest of this management
// cluster is adopted; one of another, or of none known, only with an
// opt-in. "false" never adopts.
func AdoptionVerdict(me, found Marker, policy *v1alpha1.AdoptionPolicy, override string) Adoption {
	switch {
	case override == "false":
		return CreateAnew
	case found.UID == me.UID, found.Cluster != "" && found.Cluster == me.Cluster, override == "true":
		return Adopt
	case policy == nil:
		return WaitForOptIn
	case policy.AnyCluster:
		return Adopt
	}
	for _, c := range policy.FromClusters {
		if c == ClusterOf(found) {
			return Adopt
		}
	}
	return WaitForOptIn
}

// Marked is a guest whose marker names the resource looking for one.
type Marked struct {
	Ref    pve.GuestRef
	Marker Marker
}

// FindMarked finds the guests of the identity's type named name (as the kind
// names the guests it creates) whose marker names mg's kind, namespace and
// name. A kind of guests (template false) finds no template; a kind of
// templates finds a guest not converted yet as well: a build interrupted
// between the create and the conversion is resumed on it. Names come
// from the connection's one /cluster/resources view; only the configuration
// of guests bearing the name is read, never one per guest.
func (id Identity) FindMarked(ctx context.Context, mg metav1.Object, name string, template bool) ([]Marked, error) {
	if name == "" {
		return nil, nil
	}
	// Never a view read before this client's last create: a re-apply right
	// after an orphaning delete would not find the guest it cloned moments
	// before, and create a second one.
	rows, err := id.Client.ClusterResourcesSinceCreates(ctx, BusyListingAge)
	if err != nil {
		return nil, err
	}
	me := id.MarkerOf(mg)
	var out []Marked
	for _, r := range rows {
		if r.Name != name || (r.Template && !template) || (r.Type != "" && r.Type != string(id.Type)) {
			continue
		}
		ref := pve.GuestRef{Type: id.Type, Node: r.Node, VMID: r.VMID}
		cfg, err := id.Client.GuestPending(ctx, ref)
		if pve.IsGuestNotFound(err) {
			continue // moved or gone since the listing: the next look finds it
		}
		if err != nil {
			return nil, errors.Wrapf(err, "cannot read the description of %s %s", id.Noun, ref)
		}
		if m, ok := ParseMarker(pve.Description(cfg)); ok && m.SameObject(me) {
			out = append(out, Marked{Ref: ref, Marker: m})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref.VMID < out[j].Ref.VMID })
	return out, nil
}

// AdoptTarget is what a resource without an external name tells
// AdoptExisting: the name its kind gives guests, whether they are
// templates (then a marked guest not converted yet is adopted too, see
// FindMarked), and where it records an adoption.
type AdoptTarget struct {
	Name     string
	Template bool
	Status   **v1alpha1.AdoptionStatus
}

// AdoptExisting runs before a resource without an external name creates
// anything. It returns adopted true once it stored the VMID of a marked
// guest as mg's external name (persisted at once, as Claim does), and wait
// true when mg must create nothing: a marked guest it may not adopt (the
// Ready condition says which and how to adopt it), or several.
func (id Identity) AdoptExisting(ctx context.Context, mg resource.Managed, t AdoptTarget) (adopted, wait bool, err error) {
	if mg.GetAnnotations()[v1alpha1.AnnotationAdopt] == "false" {
		return false, false, nil
	}
	found, err := id.FindMarked(ctx, mg, t.Name, t.Template)
	if err != nil || len(found) == 0 {
		return false, false, err
	}
	if len(found) > 1 {
		mg.SetConditions(adoptionRequired("several " + id.Noun + "s are marked by this resource's kind, namespace and name (" + describeAll(found) + "): set the external name (annotation crossplane.io/external-name) to the VMID of the one to keep"))
		return false, true, nil
	}
	g := found[0]
	verdict, err := id.verdictOn(ctx, mg, g, "not creating another")
	if err != nil || verdict != Adopt {
		return false, verdict == WaitForOptIn, err
	}
	return true, false, id.adopt(ctx, mg, g, t.Status)
}

// verdictOn decides on g for mg (AdoptionVerdict, with mg's connection's
// policy and mg's override); waiting, it says so on mg: which guest, whose,
// and how to adopt it. instead says what mg does not do meanwhile.
func (id Identity) verdictOn(ctx context.Context, mg resource.Managed, g Marked, instead string) (Adoption, error) {
	me := id.MarkerOf(mg)
	override := mg.GetAnnotations()[v1alpha1.AnnotationAdopt]
	verdict := AdoptionVerdict(me, g.Marker, nil, override)
	if verdict == WaitForOptIn {
		// Only then does the connection's policy matter.
		policy, err := id.adoptionPolicy(ctx)
		if err != nil {
			return CreateAnew, err
		}
		verdict = AdoptionVerdict(me, g.Marker, policy, override)
	}
	if verdict == WaitForOptIn {
		msg := "found " + describe(g) + "; " + instead + ". It belongs to management cluster " + ClusterOf(g.Marker) + " (this one: " + ClusterOf(me) + "). To adopt it, add " + strconv.Quote(ClusterOf(g.Marker)) + " to spec.adoption.fromClusters of ProxmoxConnection " + id.Connection + ", or annotate this resource " + v1alpha1.AnnotationAdopt + "=true; to create a new " + id.Noun + " beside it, annotate " + v1alpha1.AnnotationAdopt + "=false and remove the external name"
		mg.SetConditions(adoptionRequired(msg))
		id.Record.Event(mg, event.Warning(ReasonAdoptionRequired, errors.New(msg)))
	}
	return verdict, nil
}

// MayTakeOver reports whether mg, whose external name points at f (a guest
// marked by mg's kind, namespace and name with another UID), may rewrite its
// marker. A marker of another management cluster needs the same opt-in as
// an adoption: otherwise two live clusters whose objects point at one guest
// (a Velero restore keeping external names, say) would take it from each
// other on every poll. Markers naming no cluster are taken over, as before
// clusters were named.
func (id Identity) MayTakeOver(ctx context.Context, mg resource.Managed, f *Found) (bool, error) {
	m, _ := ParseMarker(pve.Description(f.Cfg))
	if m.Cluster == "" || m.Cluster == id.Cluster {
		return true, nil
	}
	verdict, err := id.verdictOn(ctx, mg, Marked{Ref: f.Ref, Marker: m}, "not taking it over")
	return verdict == Adopt, err
}

// adoptionPolicy is the resource's connection's spec.adoption.
func (id Identity) adoptionPolicy(ctx context.Context) (*v1alpha1.AdoptionPolicy, error) {
	pc := &v1alpha1.ProxmoxConnection{}
	if err := id.Kube.Get(ctx, types.NamespacedName{Name: id.Connection}, pc); err != nil {
		return nil, errors.Wrapf(err, "cannot read ProxmoxConnection %s for its adoption policy", id.Connection)
	}
	return pc.Spec.Adoption, nil
}

// adopt stores g's VMID as mg's external name, then records the adoption
// in mg's status, at once too: the reconciler may refresh mg from the API
// server (persisting an annotation, say) before it writes status.
func (id Identity) adopt(ctx context.Context, mg resource.Managed, g Marked, status **v1alpha1.AdoptionStatus) error {
	meta.SetExternalName(mg, strconv.Itoa(g.Ref.VMID))
	if err := id.Kube.Update(ctx, mg); err != nil {
		ForgetExternalName(mg)
		return errors.Wrap(err, "cannot record the adopted guest's VMID on the resource")
	}
	id.VMIDs.Hold(id.Connection, g.Ref.VMID)
	*status = &v1alpha1.AdoptionStatus{
		FromCluster: ClusterOf(g.Marker), VMID: int32(g.Ref.VMID), //nolint:gosec // a VMID from PVE's listing
		PreviousUID: g.Marker.UID, Time: metav1.NewTime(time.Now()),
	}
	if err := id.Kube.Status().Update(ctx, mg); err != nil {
		return errors.Wrap(err, "cannot record the adoption in the resource's status")
	}
	id.Record.Event(mg, event.Normal(ReasonAdopted, "adopted "+describe(g)+" instead of creating one"))
	return nil
}

func describe(g Marked) string {
	return guestName(g.Ref) + " on node " + g.Ref.Node + " (marker: " + g.Marker.String() + ")"
}

func describeAll(gs []Marked) string {
	s := make([]string, 0, len(gs))
	for _, g := range gs {
		s = append(s, guestName(g.Ref)+" on node "+g.Ref.Node+" of cluster "+ClusterOf(g.Marker))
	}
	return strings.Join(s, ", ")
}

// guestName names a guest in messages: "qemu 100".
func guestName(ref pve.GuestRef) string { return string(ref.Type) + " " + strconv.Itoa(ref.VMID) }

// adoptionRequired is the Ready condition of a resource waiting for an
// adoption opt-in.
func adoptionRequired(msg string) xpv2.Condition {
	return xpv2.Condition{
		Type: xpv2.TypeReady, Status: "False", Reason: v1alpha1.ReasonAdoptionRequired,
		Message: msg, LastTransitionTime: metav1.Now(),
	}
}
