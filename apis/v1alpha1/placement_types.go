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

// GuestPlacementSpec lets the provider pick a guest's node when nodeName is
// empty. PVE 9 gives nodes no tags in /cluster/resources (only guests have
// them), so nodes are named, not selected by label.
type GuestPlacementSpec struct {
	// AllowedNodes are the nodes the guest may be created on. The provider
	// picks, among those online (and, for a clone, those the template can be
	// cloned to), the one with the most free memory, records the choice in
	// status.placement and never moves the guest afterwards because the
	// figures changed.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=64
	// +listType=set
	AllowedNodes []string `json:"allowedNodes"`
}

// PlacementSpread says how a VirtualMachineSet spreads its VMs.
// +kubebuilder:validation:Enum=Nodes
type PlacementSpread string

// PlacementSpreadNodes keeps the set's VMs as even as possible across the
// allowed online nodes: at most one more on any node than on another.
const PlacementSpreadNodes PlacementSpread = "Nodes"

// SetPlacementSpec places a VirtualMachineSet's VMs when nodeName is empty.
type SetPlacementSpec struct {
	// AllowedNodes are the nodes the set's VMs may be created on.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=64
	// +listType=set
	AllowedNodes []string `json:"allowedNodes"`

	// Spread: Nodes puts each new VM (on create and scale-up) on an allowed
	// online node holding the fewest of the set's VMs, the one with the most
	// free memory among those; unset puts it on the node with the most free
	// memory. An offline node is skipped (the set's NodesSkipped condition
	// says so). VMs already placed are never moved.
	// +optional
	Spread PlacementSpread `json:"spread,omitempty"`
}

// PlacementDecision is the node the provider picked for a guest created
// without nodeName, and why. It is decided once, before the create, and
// kept.
type PlacementDecision struct {
	// Node picked.
	Node string `json:"node"`
	// Reason the node was picked, and why the others were not.
	// +optional
	Reason string `json:"reason,omitempty"`
}
