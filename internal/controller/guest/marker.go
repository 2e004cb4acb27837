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

// markerRe matches our ownership line in a guest's description. The format
// is documented in identity.go and is part of the API: changing it orphans every
// existing guest.
var markerRe = regexp.MustCompile(`^crossplane: ([a-z0-9]([-a-z0-9]*[a-z0-9])?)/([a-z0-9]([-.a-z0-9]*[a-z0-9])?) uid=(\S+)\s*$`)

// Marker identifies the Kubernetes object that owns a guest.
type Marker struct {
	Namespace string
	Name      string
	UID       string
}

func (m Marker) String() string {
	return "crossplane: " + m.Namespace + "/" + m.Name + " uid=" + m.UID
}

// SameObject reports whether m names the object key (namespace and name),
// whatever its UID.
func (m Marker) SameObject(o Marker) bool { return m.Namespace == o.Namespace && m.Name == o.Name }

// ParseMarker returns the last ownership line of a description.
func ParseMarker(description string) (Marker, bool) {
	lines := strings.Split(strings.ReplaceAll(description, "\r\n", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if m := markerRe.FindStringSubmatch(strings.TrimSpace(lines[i])); m != nil {
			return Marker{Namespace: m[1], Name: m[3], UID: m[5]}, true
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
