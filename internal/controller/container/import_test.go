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

package container

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// The template an import writes reads back as the spec it was made from, so
// the controller finds nothing to change in the imported container.
func TestImportedTemplateRoundTrips(t *testing.T) {
	cfg := pve.GuestConfig{}
	for k, v := range map[string]string{"hostname": "web-ct", "tags": "a;b", "onboot": "1", "nameserver": "192.0.2.53", "cores": "2", "memory": "1024", "swap": "0",
		"features": "nesting=1", "rootfs": "local-lvm:vm-200-disk-0,size=8G", "mp0": "local-lvm:vm-200-disk-1,mp=/srv,size=4G",
		"net0": "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01,ip=192.0.2.20/24,gw=192.0.2.1,tag=20,type=veth"} {
		cfg[k] = pve.PendingEntry{Value: v, HasValue: true}
	}
	var spec v1alpha1.ContainerSpec
	Imported(pve.ImportedLXCSpec(cfg), &spec)
	got := pve.LXCSpec{Config: SpecFields.Values(&spec)}
	hardwareInto(&got, spec.Template)
	want := v1alpha1.ContainerSpec{Name: "web-ct", Tags: []string{"a", "b"}, OnBoot: ptr.To(true), Nameserver: []string{"192.0.2.53"},
		Template: &v1alpha1.ContainerTemplate{Cores: 2, Memory: 1024, Swap: ptr.To[int64](0), Features: &v1alpha1.ContainerFeatures{Nesting: true},
			Disk:    []v1alpha1.ContainerDisk{{Storage: "local-lvm", Size: 8}, {Storage: "local-lvm", Size: 4, Path: "/srv"}},
			Network: []v1alpha1.ContainerNetwork{{Name: "eth0", Bridge: "vmbr0", VLAN: 20, IP: "192.0.2.20/24", GW: "192.0.2.1"}}}}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("Imported(ImportedLXCSpec(cfg)): -want, +got:\n%s", diff)
	}
	if p := pve.DiffLXC(got, cfg); !p.Empty() || len(p.Refused) > 0 {
		t.Errorf("the imported template would change the container: %+v", p)
	}
}
