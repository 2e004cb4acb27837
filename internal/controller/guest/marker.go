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
	"regexp"
	"strings"
)

// markerRe matches our ownership line in a guest's description:
//
//	crossplane: <namespace>/<name> uid=<uid>[ kind=<Kind>][ cluster=<id>]
//
// The kind and cluster fields came later: a marker without them (written
// before they existed) still parses, and names no kind and no cluster. The
// format is part of the API (virtualmachine/doc.go, docs/kinds/virtualmachine.md): changing it
// orphans every existing guest.
var markerRe = regexp.MustCompile(`^crossplane: ([a-z0-9]([-a-z0-9]*[a-z0-9])?)/([a-z0-9]([-.a-z0-9]*[a-z0-9])?) uid=(\S+?)(?: kind=([A-Za-z][A-Za-z0-9]*))?(?: cluster=([-A-Za-z0-9_.:]+))?\s*$`)

// Marker identifies the Kubernetes object that owns a guest: its kind,
// namespace, name and UID, and the management cluster it lives in.
type Marker struct {
	Namespace string
	Name      string
	UID       string
	// Kind is the resource's kind ("VirtualMachine"); empty in a marker
	// written before markers named it.
	Kind string
	// Cluster identifies the management cluster (ClusterIdentity); empty
	// when unknown or in a marker written before markers named it.
	Cluster string
}

func (m Marker) String() string {
	s := "crossplane: " + m.Namespace + "/" + m.Name + " uid=" + m.UID
	if m.Kind != "" {
		s += " kind=" + m.Kind
	}
	if m.Cluster != "" {
		s += " cluster=" + m.Cluster
	}
	return s
}

// SameObject reports whether m and o name the same object (namespace and
// name, and kind when both name one), whatever its UID and cluster.
func (m Marker) SameObject(o Marker) bool {
	return m.Namespace == o.Namespace && m.Name == o.Name && (m.Kind == "" || o.Kind == "" || m.Kind == o.Kind)
}

// SameUID reports whether m and o name the same object with the same UID:
// UIDs are unique, so the cluster need not be compared.
func (m Marker) SameUID(o Marker) bool { return m.SameObject(o) && m.UID == o.UID }

// Outdated reports whether m, found on a guest of the object want names
// (the same UID), lacks what want carries: the kind, or this cluster's
// identity (a marker written before markers named them, or before the
// provider had an identity). A marker naming a cluster is never stripped of
// it by a provider that has no identity.
func (m Marker) Outdated(want Marker) bool {
	return (m.Kind == "" && want.Kind != "") || (want.Cluster != "" && m.Cluster != want.Cluster)
}

// NeedsMarker reports whether the marker want is to be written on a guest
// whose ownership is own and whose description is description: an import
// now managed, a new UID (adopted), or this very object's outdated marker
// (upgraded once, so that the guest is recognised as this cluster's if its
// resource is ever orphaned and applied again).
func NeedsMarker(own Ownership, description string, want Marker) bool {
	switch own {
	case MineNewUID, Imported:
		return true
	case Mine:
		m, _ := ParseMarker(description)
		return m.Outdated(want)
	case InProgress, LostRace, Conflict:
		return false
	}
	return false
}

// ParseMarker returns the last ownership line of a description.
func ParseMarker(description string) (Marker, bool) {
	lines := strings.Split(strings.ReplaceAll(description, "\r\n", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if m := markerRe.FindStringSubmatch(strings.TrimSpace(lines[i])); m != nil {
			return Marker{Namespace: m[1], Name: m[3], UID: m[5], Kind: m[6], Cluster: m[7]}, true
		}
	}
	return Marker{}, false
}

// WithMarker returns description with every ownership line removed and m
// appended as its last line; the user's notes above stay as they are.
func WithMarker(description string, m Marker) string {
	lines := strings.Split(strings.ReplaceAll(description, "\r\n", "\n"), "\n")
	kept := make([]string, 0, len(lines)+1)
	for _, l := range lines {
		if markerRe.MatchString(strings.TrimSpace(l)) {
			continue
		}
		kept = append(kept, l)
	}
	for len(kept) > 0 && strings.TrimSpace(kept[len(kept)-1]) == "" {
		kept = kept[:len(kept)-1]
	}
	return strings.Join(append(kept, m.String()), "\n")
}
