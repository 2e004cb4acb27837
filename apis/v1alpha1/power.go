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

// PowerState is the power state a guest is kept in.
// +kubebuilder:validation:Enum=Running;Stopped
type PowerState string

// Power states.
const (
	// PowerStateRunning starts the guest whenever it is found stopped.
	PowerStateRunning PowerState = "Running"
	// PowerStateStopped shuts the guest down whenever it is found running:
	// gracefully first, then stopped when the shutdown timeout runs out.
	PowerStateStopped PowerState = "Stopped"
)

// GuestPower is the part of a guest's spec that says how its power state is
// kept. It is embedded inline: the fields sit directly under spec.
type GuestPower struct {
	// PowerState the guest is kept in: Running or Stopped, corrected
	// whenever it drifts (someone stopping it in the Proxmox VE UI, say).
	// It takes precedence over enableAutoStart. A Stopped guest still gets
	// configuration drift corrected, without being started; changes that
	// would need a reboot take effect at its next start. Absent: kubemox's
	// behaviour (enableAutoStart starts a stopped guest; nothing stops one).
	// +optional
	PowerState PowerState `json:"powerState,omitempty"`

	// ShutdownTimeoutSeconds is how long a guest being stopped (powerState
	// Stopped) is given to shut down gracefully (ACPI power button, or the
	// guest agent when one is configured) before it is stopped hard, with an
	// event saying so. Default 60, as Proxmox VE's.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +optional
	ShutdownTimeoutSeconds *int32 `json:"shutdownTimeoutSeconds,omitempty"`
}

// defaultShutdownTimeoutSeconds is Proxmox VE's own default (qemu-server's
// _do_vm_stop), written into requests so the wait is always explicit.
const defaultShutdownTimeoutSeconds = 60

// ShutdownTimeout is the graceful shutdown's timeout in seconds.
func (p *GuestPower) ShutdownTimeout() int {
	if p.ShutdownTimeoutSeconds == nil {
		return defaultShutdownTimeoutSeconds
	}
	return int(*p.ShutdownTimeoutSeconds)
}

// KeepsRunning reports whether a stopped guest is to be started: powerState
// Running, or no powerState and autoStart.
func (p *GuestPower) KeepsRunning(autoStart bool) bool {
	return p.PowerState == PowerStateRunning || (p.PowerState == "" && autoStart)
}

// KeepsStopped reports whether a running guest is to be shut down.
func (p *GuestPower) KeepsStopped() bool {
	return p.PowerState == PowerStateStopped
}
