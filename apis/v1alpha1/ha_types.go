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

// HAState is the state Proxmox VE's HA manager keeps an HA resource in
// (pve-ha-manager's `state`).
// +kubebuilder:validation:Enum=started;stopped;disabled;ignored
type HAState string

// HA states.
const (
	// HAStateStarted: HA starts the guest and restarts or relocates it on failure.
	HAStateStarted HAState = "started"
	// HAStateStopped: HA keeps the guest stopped (and still relocates it on node failure).
	HAStateStopped HAState = "stopped"
	// HAStateDisabled: HA stops the guest and does not relocate it.
	HAStateDisabled HAState = "disabled"
	// HAStateIgnored: HA leaves the guest alone; power is managed as without HA.
	HAStateIgnored HAState = "ignored"
)

// GuestHA makes the guest a Proxmox VE HA resource (/cluster/ha/resources,
// sid vm:<vmid> or ct:<vmid>), kept as written here: a change made in
// Proxmox VE is corrected. Unset options are written with Proxmox VE's
// defaults, so the resource always says exactly this.
type GuestHA struct {
	// State HA keeps the guest in (PVE's state; default started). While it
	// is started, stopped or disabled, HA decides the guest's power, so
	// powerState must agree with it: Running needs started, Stopped needs
	// stopped or disabled.
	// +kubebuilder:default=started
	// +optional
	State HAState `json:"state,omitempty"`

	// MaxRestart is how often HA restarts the guest on its node after a
	// failed start (PVE's max_restart; default 1).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRestart *int32 `json:"maxRestart,omitempty"`

	// MaxRelocate is how often HA moves the guest to another node after
	// failed restarts (PVE's max_relocate; default 1).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRelocate *int32 `json:"maxRelocate,omitempty"`

	// Failback moves the guest back to its preferred node when that comes
	// back (PVE 9's failback; default true).
	// +optional
	Failback *bool `json:"failback,omitempty"`
}

// StateOrDefault is the state asked for, started when unset.
func (h *GuestHA) StateOrDefault() HAState {
	if h.State == "" {
		return HAStateStarted
	}
	return h.State
}

// DrivesPower reports whether HA, not the provider, decides the guest's
// power state: every state but ignored.
func (h *GuestHA) DrivesPower() bool {
	return h != nil && h.StateOrDefault() != HAStateIgnored
}

// GuestHAStatus is the guest's HA resource as last observed.
type GuestHAStatus struct {
	// SID is the HA resource ID (vm:<vmid> or ct:<vmid>).
	SID string `json:"sid"`

	// State is the resource's requested state in Proxmox VE.
	// +optional
	State string `json:"state,omitempty"`
}
