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
	"time"

	"github.com/google/go-cmp/cmp"

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
	waitHA(t, p, vmid, want)
	if got := cr.Status.HA.SID; got != "ct:"+strconv.Itoa(vmid) {
		t.Errorf("status.ha.sid = %q, want ct:%d", got, vmid)
	}

	if !p.Sim.SetHAOption(vmid, "failback", "1") {
		t.Fatalf("container %d is not an HA resource in the simulator", vmid)
	}
	waitHA(t, p, vmid, want)

	p.DeleteAndWait(t, cr, wait)
	haDelete := requestIndex(p, "DELETE", "/cluster/ha/resources/ct:"+strconv.Itoa(vmid))
	destroy := requestIndex(p, "DELETE", "/nodes/"+node+"/lxc/"+strconv.Itoa(vmid))
	if haDelete < 0 || destroy < 0 || haDelete > destroy {
		t.Errorf("HA resource removed at request %d, container destroyed at %d: want the HA resource removed first", haDelete, destroy)
	}
}

// waitHA waits until the simulator's HA resource of vmid has exactly want.
func waitHA(t *testing.T, p *providertest.Harness, vmid int, want map[string]string) {
	t.Helper()
	var got map[string]string
	providertest.Eventually(t, wait, 200*time.Millisecond, func() bool {
		got, _ = p.Sim.HAResource(vmid)
		return cmp.Equal(want, got)
	}, func() string { return "HA resource -want, +got:\n" + cmp.Diff(want, got) })
}

// requestIndex is the position of the first logged request with this method
// and path, -1 when there is none.
func requestIndex(p *providertest.Harness, method, path string) int {
	for i, r := range p.Sim.RequestLog() {
		if r.Method == method && r.Path == path {
			return i
		}
	}
	return -1
}
