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
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// The kinds with reconcilers of the provider's own report conditions as
// managed resources do (resource.Conditioned), so a pause
// (crossplane.io/paused) is reported the same way on every kind.

// GetCondition of this VirtualMachineSet.
func (s *VirtualMachineSet) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return s.Status.GetCondition(ct)
}

// SetConditions of this VirtualMachineSet.
func (s *VirtualMachineSet) SetConditions(c ...xpv2.Condition) { s.Status.SetConditions(c...) }

// GetCondition of this VirtualMachineSnapshotPolicy.
func (p *VirtualMachineSnapshotPolicy) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return p.Status.GetCondition(ct)
}

// SetConditions of this VirtualMachineSnapshotPolicy.
func (p *VirtualMachineSnapshotPolicy) SetConditions(c ...xpv2.Condition) {
	p.Status.SetConditions(c...)
}

// GetCondition of this GuestImport.
func (g *GuestImport) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return g.Status.GetCondition(ct)
}

// SetConditions of this GuestImport.
func (g *GuestImport) SetConditions(c ...xpv2.Condition) { g.Status.SetConditions(c...) }
