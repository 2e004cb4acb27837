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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PollStatus tells when a managed resource is checked against Proxmox VE
// next.
type PollStatus struct {
	// NextCheckTime is when the provider is due to check the resource
	// against Proxmox VE next: after the poll interval (--poll, or the
	// crossplane.io/poll-interval annotation) with its jitter once the
	// resource is settled, within seconds while work is under way. A check
	// may come earlier (a change to the resource, its connection's
	// credentials replaced) or later (the provider's rate limit).
	// +optional
	NextCheckTime *metav1.Time `json:"nextCheckTime,omitempty"`
}

// SetNextCheckTime records when the resource is checked next.
func (s *PollStatus) SetNextCheckTime(t metav1.Time) { s.NextCheckTime = &t }

// The managed kinds' next checks (see PollStatus).

// GetPollStatus of this VirtualMachine.
func (mg *VirtualMachine) GetPollStatus() *PollStatus { return &mg.Status.PollStatus }

// GetPollStatus of this Container.
func (mg *Container) GetPollStatus() *PollStatus { return &mg.Status.PollStatus }

// GetPollStatus of this VirtualMachineTemplate.
func (mg *VirtualMachineTemplate) GetPollStatus() *PollStatus { return &mg.Status.PollStatus }

// GetPollStatus of this VirtualMachineSnapshot.
func (mg *VirtualMachineSnapshot) GetPollStatus() *PollStatus { return &mg.Status.PollStatus }

// GetPollStatus of this StorageDownloadURL.
func (mg *StorageDownloadURL) GetPollStatus() *PollStatus { return &mg.Status.PollStatus }

// GetPollStatus of this CustomCertificate.
func (mg *CustomCertificate) GetPollStatus() *PollStatus { return &mg.Status.PollStatus }
