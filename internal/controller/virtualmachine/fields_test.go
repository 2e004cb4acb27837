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

package virtualmachine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// Every key the VirtualMachine's tables send is declared in the client's
// surface, the list the conformance suite's coverage test works from: a
// new row fails here, at once, rather than when a simulator test first
// sends it.
func TestFieldsAreDeclaredInTheSurface(t *testing.T) {
	fields := append(append(append(guest.Fields{}, SpecFields...), HardwareFields...), guest.CloudInitFields...)
	guesttest.FieldsDeclaredInSurface(t, []string{"POST /nodes/{node}/qemu", "PUT /nodes/{node}/qemu/{vmid}/config"},
		append(fields, guest.Field{Path: "network", Key: "net[n]"},
			guest.Field{Path: "cloudInitConfig.ipConfigs", Key: "ipconfig[n]"}, guest.Field{Path: "cloudInitConfig.custom", Key: "cicustom"},
			guest.Field{Path: "pciDevices", Key: "hostpci[n]"}))
}

// A PCI device's hostpciN comes from its rows and the key its type picks
// for the ID: a raw address is the value's default key, written bare.
func TestPCIDevicesRequestBody(t *testing.T) {
	hw := &v1alpha1.VirtualMachineHardware{PCIDevices: []v1alpha1.PCIDevice{
		{Type: v1alpha1.PCIDeviceTypeMapped, DeviceID: "gpu", PrimaryGPU: true, PCIE: true},
		{Type: v1alpha1.PCIDeviceTypeRaw, DeviceID: "0000:01:00.0"},
	}}
	s := pve.VMSpec{Config: map[string]any{}}
	hardwareInto(&s, hw)
	want := map[string]string{"hostpci0": "mapping=gpu,pcie=1,x-vga=1", "hostpci1": "0000:01:00.0"}
	if diff := cmp.Diff(want, pve.Diff(s, pve.GuestConfig{}).Set); diff != "" {
		t.Errorf("hostpciN written to a guest without them: -want, +got:\n%s", diff)
	}
	have := pve.GuestConfig{"hostpci0": {Value: "x-vga=1,mapping=gpu,pcie=1", HasValue: true}, "hostpci1": {Value: "0000:01:00.0", HasValue: true}}
	if set := pve.Diff(s, have).Set; len(set) != 0 {
		t.Errorf("a guest with the same devices in another option order is asked for %v", set)
	}
}
