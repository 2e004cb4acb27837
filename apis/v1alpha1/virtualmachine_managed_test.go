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

import "testing"

func TestSpecDefaultsWhenUnset(t *testing.T) {
	s := VirtualMachineSpec{Template: &VirtualMachineCloneSpec{}}
	if !s.AutoStart() {
		t.Error("AutoStart() = false for an unset enableAutoStart, want true")
	}
	if !s.MayReboot() {
		t.Error("MayReboot() = false for an unset rebootPolicy, want true")
	}
	if !s.IsFullClone() {
		t.Error("IsFullClone() = false for an unset fullClone, want true")
	}
	if s.IsClone() {
		t.Error("IsClone() = true for a template without a name, want false (created from scratch)")
	}
	if !(&CloudInitConfig{}).UpgradesPackages() {
		t.Error("UpgradesPackages() = false for an unset upgradePackages, want true")
	}
}

func TestSpecExplicitFalseStaysFalse(t *testing.T) {
	no := false
	s := VirtualMachineSpec{
		EnableAutoStart: &no,
		RebootPolicy:    RebootPolicyNever,
		Template:        &VirtualMachineCloneSpec{Name: "tpl", FullClone: &no},
	}
	if s.AutoStart() || s.MayReboot() || s.IsFullClone() {
		t.Errorf("AutoStart()=%v MayReboot()=%v IsFullClone()=%v, want all false", s.AutoStart(), s.MayReboot(), s.IsFullClone())
	}
	if !s.IsClone() {
		t.Error("IsClone() = false for a named template, want true")
	}
	if (&CloudInitConfig{UpgradePackages: &no}).UpgradesPackages() {
		t.Error("UpgradesPackages() = true for upgradePackages: false")
	}
}

func TestCloudInitAndHardwareFollowTheMode(t *testing.T) {
	top := &CloudInitConfig{User: "top"}
	inTemplate := &CloudInitConfig{User: "template"}
	inScratch := &CloudInitConfig{User: "scratch"}
	cases := map[string]struct {
		spec      VirtualMachineSpec
		wantCI    *CloudInitConfig
		wantCores int32
		wantHW    bool
	}{
		"TopLevel":   {spec: VirtualMachineSpec{CloudInitConfig: top, VMSpec: &VirtualMachineScratchSpec{VirtualMachineHardware: VirtualMachineHardware{Cores: 3}}}, wantCI: top, wantCores: 3, wantHW: true},
		"InTemplate": {spec: VirtualMachineSpec{Template: &VirtualMachineCloneSpec{CloudInitConfig: inTemplate, VirtualMachineHardware: VirtualMachineHardware{Cores: 2}}}, wantCI: inTemplate, wantCores: 2, wantHW: true},
		"InVMSpec":   {spec: VirtualMachineSpec{VMSpec: &VirtualMachineScratchSpec{CloudInitConfig: inScratch, VirtualMachineHardware: VirtualMachineHardware{Cores: 4}}}, wantCI: inScratch, wantCores: 4, wantHW: true},
		"Import":     {spec: VirtualMachineSpec{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.spec.CloudInit(); got != tc.wantCI {
				t.Errorf("CloudInit() = %+v, want %+v", got, tc.wantCI)
			}
			hw := tc.spec.Hardware()
			if (hw != nil) != tc.wantHW {
				t.Fatalf("Hardware() = %+v, want present: %v", hw, tc.wantHW)
			}
			if hw != nil && hw.Cores != tc.wantCores {
				t.Errorf("Hardware().Cores = %d, want %d", hw.Cores, tc.wantCores)
			}
		})
	}
}
