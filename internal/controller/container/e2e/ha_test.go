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
	"strconv"
	"testing"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// spec.ha makes the container a PVE HA resource (ct:<vmid>) with every option
// written, a change made in Proxmox VE is set back, and deleting the container
// takes it out of HA before it is destroyed.
func TestHAResourceFollowsTheSpec(t *testing.T) {
	p := require(t)
	ns := p.Namespace(t, "ct-")
	cr := newContainer(ns, "ha", func(tpl *v1alpha1.ContainerTemplate) { tpl.OSTemplate = archive })
	relocate, failback := int32(0), false
	cr.Spec.HA = &v1alpha1.GuestHA{State: v1alpha1.HAStateStarted, MaxRelocate: &relocate, Failback: &failback}
	create(t, p, cr)
	cr = waitContainer(t, p, ns, "ha", "Ready with its HA resource", func(c *v1alpha1.Container) bool {
		return ready(c) && c.Status.HA != nil && c.Status.HA.State == "started"
	})
	vmid := providertest.VMIDOf(t, cr)
	want := map[string]string{"state": "started", "max_restart": "1", "max_relocate": "0", "failback": "0"}
	p.WaitHA(t, vmid, want, wait)
	if got := cr.Status.HA.SID; got != "ct:"+strconv.Itoa(vmid) {
		t.Errorf("status.ha.sid = %q, want ct:%d", got, vmid)
	}

	if !p.Sim.SetHAOption(vmid, "failback", "1") {
		t.Fatalf("container %d is not an HA resource in the simulator", vmid)
	}
	p.WaitHA(t, vmid, want, wait)

	p.DeleteAndWait(t, cr, wait)
	haDelete := p.RequestIndex("DELETE", "/cluster/ha/resources/ct:"+strconv.Itoa(vmid))
	destroy := p.RequestIndex("DELETE", "/nodes/"+node+"/lxc/"+strconv.Itoa(vmid))
	if haDelete < 0 || destroy < 0 || haDelete > destroy {
		t.Errorf("HA resource removed at request %d, container destroyed at %d: want the HA resource removed first", haDelete, destroy)
	}
}
