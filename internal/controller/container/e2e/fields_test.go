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
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// The container's table fields (tags, onboot, nameserver, searchdomain)
// reach Proxmox, and drift made behind the provider's back is put back.
func TestTableFieldsReachProxmoxAndDriftIsCorrected(t *testing.T) {
	p := require(t)
	ns := p.Namespace(t, "ct-")
	cr := newContainer(ns, "fields", func(tpl *v1alpha1.ContainerTemplate) { tpl.OSTemplate = archive })
	cr.Spec.Tags, cr.Spec.OnBoot = []string{"web", "prod"}, ptr.To(true)
	cr.Spec.Nameserver, cr.Spec.Searchdomain = []string{"192.0.2.53", "192.0.2.54"}, []string{"example.org"}
	create(t, p, cr)
	cr = waitReady(t, p, ns, "fields")
	vmid := providertest.VMIDOf(t, cr)
	want := map[string]string{"tags": "prod;web", "onboot": "1", "nameserver": "192.0.2.53 192.0.2.54", "searchdomain": "example.org"}
	p.WaitGuest(t, vmid, "with the table's fields", wait, func(g pvesim.GuestView) bool { return providertest.GuestHas(g, want) })

	for k, v := range map[string]string{"tags": "other", "onboot": "0", "nameserver": "198.51.100.1"} {
		if err := p.Sim.SetGuestConfig(vmid, k, v); err != nil {
			t.Fatal(err)
		}
	}
	p.WaitGuest(t, vmid, "with drift corrected", wait, func(g pvesim.GuestView) bool { return providertest.GuestHas(g, want) })
	p.DeleteAndWait(t, cr, wait)
}
