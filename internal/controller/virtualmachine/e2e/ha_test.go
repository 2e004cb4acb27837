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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// examples/virtualmachine/ha.yaml (on the harness's template) makes the VM a
// PVE HA resource with every option written, a change
// made in Proxmox VE (ha-manager set) is set back with an event naming what
// Proxmox VE had, and deleting the VM takes
// it out of HA before the VM is destroyed (pve-ha-manager: a guest HA manages
// is started again while it is shut down, and destroy refuses it without purge).
func TestHAResourceFollowsTheSpec(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "virtualmachine", "ha.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	vm := &v1alpha1.VirtualMachine{}
	if err := yaml.UnmarshalStrict(raw, vm); err != nil {
		t.Fatal(err)
	}
	vm.Namespace, vm.Spec.Template.Name = ns, templateName
	vm = hs.create(t, vm)
	vm = hs.waitVM(t, ns, vm.Name, "Ready with its HA resource", func(v *v1alpha1.VirtualMachine) bool {
		return ready(v) && v.Status.HA != nil && v.Status.HA.State == "started"
	})
	vmid := providertest.VMIDOf(t, vm)
	want := map[string]string{"state": "started", "max_restart": "2", "max_relocate": "1", "failback": "1"}
	hs.WaitHA(t, vmid, want, wait)
	if got := vm.Status.HA.SID; got != "vm:"+strconv.Itoa(vmid) {
		t.Errorf("status.ha.sid = %q, want vm:%d", got, vmid)
	}

	if !hs.Sim.SetHAOption(vmid, "max_restart", "7") {
		t.Fatalf("VM %d is not an HA resource in the simulator", vmid)
	}
	hs.WaitHA(t, vmid, want, wait)
	ev := hs.WaitEvent(t, ns, vm.Name, "HAResourceCorrected", wait)
	if !strings.Contains(ev.Message, "max_restart=7") {
		t.Errorf("the correction's event does not name what Proxmox VE had: %q", ev.Message)
	}

	hs.delete(t, vm)
	hs.waitGone(t, ns, vm.Name)
	haDelete := hs.RequestIndex("DELETE", "/cluster/ha/resources/vm:"+strconv.Itoa(vmid))
	destroy := hs.RequestIndex("DELETE", "/nodes/"+node+"/qemu/"+strconv.Itoa(vmid))
	if haDelete < 0 || destroy < 0 || haDelete > destroy {
		t.Errorf("HA resource removed at request %d, VM destroyed at %d: want the HA resource removed first", haDelete, destroy)
	}
}
