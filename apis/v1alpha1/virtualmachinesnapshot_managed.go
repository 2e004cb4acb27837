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

package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// VirtualMachineSnapshot type metadata.
var (
	VirtualMachineSnapshotKind             = reflect.TypeFor[VirtualMachineSnapshot]().Name()
	VirtualMachineSnapshotGroupKind        = schema.GroupKind{Group: Group, Kind: VirtualMachineSnapshotKind}.String()
	VirtualMachineSnapshotKindAPIVersion   = VirtualMachineSnapshotKind + "." + SchemeGroupVersion.String()
	VirtualMachineSnapshotGroupVersionKind = SchemeGroupVersion.WithKind(VirtualMachineSnapshotKind)

	VirtualMachineSnapshotListKind             = reflect.TypeFor[VirtualMachineSnapshotList]().Name()
	VirtualMachineSnapshotListGroupVersionKind = SchemeGroupVersion.WithKind(VirtualMachineSnapshotListKind)
)

func init() {
	SchemeBuilder.Register(&VirtualMachineSnapshot{}, &VirtualMachineSnapshotList{})
}

// Snapshot name limits of Proxmox VE (pve-snapshot-name: format
// pve-configid, at most 40 characters).
const (
	snapshotNameMax = 40
	// snapshotNameHashLen is how many hex digits of a hash end a name
	// shortened to fit.
	snapshotNameHashLen = 8
)

var reSnapshotName = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{1,39}$`)

// ValidSnapshotName reports whether name is one admission accepts for
// spec.snapshotName: Proxmox VE's configuration ID of at most 40
// characters, and never current or pending in any case.
func ValidSnapshotName(name string) bool {
	lower := strings.ToLower(name)
	return reSnapshotName.MatchString(name) && lower != "current" && lower != "pending"
}

// SnapshotNameFor is the snapshot name a resource called name gets when its
// spec names none. A Kubernetes name is lowercase letters, digits, '-' and
// '.': dots become '_', a name not starting with a letter gets an "s"
// prefix, one too short or reserved a "-snap" suffix, and one too long is
// cut and ended with a hash of the whole name, so two long names that
// share a prefix stay apart.
func SnapshotNameFor(name string) string {
	s := strings.ReplaceAll(name, ".", "_")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		s = "s" + s
	}
	if len(s) < 2 || s == "current" || s == "pending" {
		s += "-snap"
	}
	if len(s) > snapshotNameMax {
		sum := sha256.Sum256([]byte(name))
		s = s[:snapshotNameMax-snapshotNameHashLen-1] + "-" + hex.EncodeToString(sum[:])[:snapshotNameHashLen]
	}
	return s
}

// DesiredSnapshotName is spec.snapshotName, else the name derived from
// metadata.name.
func (cr *VirtualMachineSnapshot) DesiredSnapshotName() string {
	if cr.Spec.SnapshotName != "" {
		return cr.Spec.SnapshotName
	}
	return SnapshotNameFor(cr.GetName())
}

// UsedConnection is the ProxmoxConnection the snapshot last went through,
// which is its guest's when it names no connection itself: the provider
// re-observes it when that connection's client changes.
func (cr *VirtualMachineSnapshot) UsedConnection() string {
	return cr.Status.ConnectionName
}
