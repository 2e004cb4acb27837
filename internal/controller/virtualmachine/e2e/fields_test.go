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

package e2e

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// The fields of the field table reach Proxmox: a clone's boot disk grows
// past the template's (kubemox issue 42), and tags, onboot, the CPU type,
// NUMA, the balloon target and the NIC's VLAN tag, firewall, MAC and MTU
// are written; drift made behind the provider's back is put back.
func TestTableFieldsReachProxmoxAndDriftIsCorrected(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	spec := cloneSpec("fields")
	spec.Tags, spec.OnBoot = []string{"web", "prod"}, ptr.To(true)
	hw := &spec.Template.VirtualMachineHardware
	hw.Disk[0].Size = 20 // the template's scsi0 is 8G
	hw.CPU, hw.NUMA, hw.Balloon = "host", ptr.To(true), ptr.To[int64](1024)
	hw.Network[0] = v1alpha1.VirtualMachineNetwork{Model: "virtio", Bridge: "vmbr0", Tag: 20, Firewall: ptr.To(true),
		MACAddr: "BC:24:11:AA:BB:CC", MTU: 1400}
	hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fields"}, Spec: spec})
	vm := hs.waitReady(t, ns, "fields")
	vmid := providertest.VMIDOf(t, vm)

	want := map[string]string{"tags": "prod;web", "onboot": "1", "cpu": "host", "numa": "1", "balloon": "1024"}
	g := hs.WaitGuest(t, vmid, "with the table's fields", wait, func(g pvesim.GuestView) bool {
		return providertest.GuestHas(g, want) && strings.Contains(providertest.GuestEffective(g, "scsi0"), "size=20G") &&
			sameNIC(providertest.GuestEffective(g, "net0"), "virtio=BC:24:11:AA:BB:CC", "bridge=vmbr0", "tag=20", "firewall=1", "mtu=1400")
	})
	t.Logf("guest %d: %v", vmid, g.Config)

	// Drift on a fast-plug key (tags, onboot) and a NIC option.
	for k, v := range map[string]string{"tags": "other", "onboot": "0", "net0": "virtio=BC:24:11:AA:BB:CC,bridge=vmbr0,mtu=1400"} {
		if err := hs.Sim.SetGuestConfig(vmid, k, v); err != nil {
			t.Fatal(err)
		}
	}
	hs.WaitGuest(t, vmid, "with drift corrected", wait, func(g pvesim.GuestView) bool {
		return providertest.GuestHas(g, map[string]string{"tags": "prod;web", "onboot": "1"}) &&
			sameNIC(providertest.GuestEffective(g, "net0"), "tag=20", "firewall=1")
	})
	hs.delete(t, vm)
	hs.waitGone(t, ns, "fields")
}

// sameNIC reports whether a netN value holds every part.
func sameNIC(v string, parts ...string) bool {
	have := map[string]bool{}
	for _, p := range strings.Split(v, ",") {
		have[p] = true
	}
	for _, p := range parts {
		if !have[p] {
			return false
		}
	}
	return true
}
