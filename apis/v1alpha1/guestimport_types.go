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
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// ImportGuestType is a kind of guest an import selects.
// +kubebuilder:validation:Enum=qemu;lxc
type ImportGuestType string

// Guest types an import selects.
const (
	ImportGuestQEMU ImportGuestType = "qemu"
	ImportGuestLXC  ImportGuestType = "lxc"
)

// VMIDRange is an inclusive range of VMIDs.
// +kubebuilder:validation:XValidation:rule="self.to >= self.from",message="vmidRanges: to must not be below from"
type VMIDRange struct {
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=999999999
	From int64 `json:"from"`
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=999999999
	To int64 `json:"to"`
}

// GuestSelector selects the guests of a connection. Every field that is set
// narrows the selection; an empty selector selects every VM that is not a
// template.
type GuestSelector struct {
	// Nodes the guest runs on (any of them).
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Nodes []string `json:"nodes,omitempty"`
	// Pools the guest belongs to (any of them).
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Pools []string `json:"pools,omitempty"`
	// Tags the guest carries (all of them).
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Tags []string `json:"tags,omitempty"`
	// NamePattern is a shell pattern the guest's name matches (web-*,
	// db-0?).
	// +kubebuilder:validation:MaxLength=128
	// +optional
	NamePattern string `json:"namePattern,omitempty"`
	// VMIDRanges the guest's VMID falls in (any of them).
	// +kubebuilder:validation:MaxItems=64
	// +optional
	VMIDRanges []VMIDRange `json:"vmidRanges,omitempty"`
	// Types of guest: qemu (VirtualMachines, the default) and lxc
	// (Containers).
	// +kubebuilder:validation:MaxItems=2
	// +optional
	Types []ImportGuestType `json:"types,omitempty"`
	// IncludeTemplates imports templates too (as Observe-only resources).
	// +optional
	IncludeTemplates bool `json:"includeTemplates,omitempty"`
}

// GuestImportSpec selects existing guests to bring under resources.
// +kubebuilder:validation:XValidation:rule="self.managementPolicies == ['Observe'] || self.managementPolicies == ['*']",message="managementPolicies must be [\"Observe\"] or [\"*\"]"
type GuestImportSpec struct {
	// ConnectionRef names the ProxmoxConnection whose guests are imported;
	// the connection named "default" when omitted.
	// +optional
	ConnectionRef *ConnectionReference `json:"connectionRef,omitempty"`

	// Selector chooses the guests.
	// +optional
	Selector GuestSelector `json:"selector,omitempty"`

	// ManagementPolicies of the resources the import creates: ["Observe"]
	// (the default: status only, nothing in Proxmox VE changes) or ["*"].
	// A container gets ["Observe", "Update", "LateInitialize"] for ["*"]:
	// PVE does not record what it was created from, so the provider can
	// never create it again.
	// +kubebuilder:default={"Observe"}
	// +optional
	ManagementPolicies xpv2.ManagementPolicies `json:"managementPolicies,omitempty"`

	// Interval re-runs the import to pick up new guests (5m, 1h). Without
	// it the import runs once, and again when its spec changes.
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:Type=string
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// Connection is the ProxmoxConnection the import reads.
func (s *GuestImportSpec) Connection() string {
	if s.ConnectionRef != nil && s.ConnectionRef.Name != "" {
		return s.ConnectionRef.Name
	}
	return DefaultConnectionName
}

// Results of one guest in an import run.
const (
	ImportResultImported = "Imported"
	ImportResultExisting = "Existing"
	ImportResultSkipped  = "Skipped"
	ImportResultFailed   = "Failed"
)

// ImportedGuest is what an import run did with one guest.
type ImportedGuest struct {
	VMID int64  `json:"vmid"`
	Name string `json:"name,omitempty"`
	Node string `json:"node,omitempty"`
	Type string `json:"type,omitempty"`
	// Resource is the resource (Kind/name) that now holds the guest.
	// +optional
	Resource string `json:"resource,omitempty"`
	// Result: Imported, Existing (an earlier run of this import made it),
	// Skipped or Failed.
	Result string `json:"result"`
	// Reason says why a guest was skipped or failed.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// GuestImportStatus is what the last run found and did.
type GuestImportStatus struct {
	xpv2.ConditionedStatus `json:",inline"`
	// ObservedGeneration is the generation the last run used.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// LastRun is when the import last ran.
	// +optional
	LastRun *metav1.Time `json:"lastRun,omitempty"`
	// Matched, Imported, Existing, Skipped and Failed count the guests of
	// the last run.
	// +optional
	Matched int32 `json:"matched,omitempty"`
	// +optional
	Imported int32 `json:"imported,omitempty"`
	// +optional
	Existing int32 `json:"existing,omitempty"`
	// +optional
	Skipped int32 `json:"skipped,omitempty"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// Guests lists the guests of the last run that were not imported before
	// (the first 100; the counts are complete).
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Guests []ImportedGuest `json:"guests,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=gimport,categories={proxmox}
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="MATCHED",type="integer",JSONPath=".status.matched"
// +kubebuilder:printcolumn:name="IMPORTED",type="integer",JSONPath=".status.imported"
// +kubebuilder:printcolumn:name="SKIPPED",type="integer",JSONPath=".status.skipped"
// +kubebuilder:printcolumn:name="FAILED",type="integer",JSONPath=".status.failed"
// +kubebuilder:printcolumn:name="LAST-RUN",type="date",JSONPath=".status.lastRun"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"

// A GuestImport brings existing Proxmox VE guests under resources in its
// namespace: a VirtualMachine (or Container) per selected guest, with the
// VMID as external name and, by default, managementPolicies ["Observe"]. The
// resources carry no owner reference to the import: deleting it leaves them.
type GuestImport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GuestImportSpec   `json:"spec,omitempty"`
	Status GuestImportStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// GuestImportList contains a list of GuestImport.
type GuestImportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GuestImport `json:"items"`
}

// GuestImport type metadata.
var (
	GuestImportKind             = reflect.TypeFor[GuestImport]().Name()
	GuestImportGroupVersionKind = SchemeGroupVersion.WithKind(GuestImportKind)
)

func init() {
	SchemeBuilder.Register(&GuestImport{}, &GuestImportList{})
}
