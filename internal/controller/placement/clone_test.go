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

package placement

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// fakeReader answers from fixed listings: a placement's reads are
// listings, and what is under test is what is made of them.
type fakeReader struct {
	templates []pve.Resource
	configs   map[int]map[string]string
	storages  []pve.StorageShare
}

func (f fakeReader) ClusterNodes(context.Context) ([]pve.NodeUsage, error) { return fourNodes, nil }
func (f fakeReader) ClusterStorages(context.Context) ([]pve.StorageShare, error) {
	return f.storages, nil
}
func (f fakeReader) CachedClusterResources(context.Context, time.Duration) ([]pve.Resource, error) {
	return f.templates, nil
}
func (f fakeReader) GuestPending(_ context.Context, ref pve.GuestRef) (pve.GuestConfig, error) {
	cfg := pve.GuestConfig{}
	for k, v := range f.configs[ref.VMID] {
		cfg[k] = pve.PendingEntry{Value: v, HasValue: true}
	}
	return cfg, nil
}

// storages: local-lvm on every node (not shared), ceph shared on pve1 and
// pve2 only, local (ISOs, not shared).
var storages = []pve.StorageShare{
	{Storage: "local-lvm", Node: "pve1"}, {Storage: "local-lvm", Node: "pve2"},
	{Storage: "ceph", Node: "pve1", Shared: true}, {Storage: "ceph", Node: "pve2", Shared: true},
	{Storage: "local", Node: "pve1"}, {Storage: "local", Node: "pve2"},
}

func TestReachability(t *testing.T) {
	tpl := func(vmid int, node, typ string) pve.Resource {
		return pve.Resource{VMID: vmid, Node: node, Name: "tpl", Type: typ, Template: true}
	}
	cases := map[string]struct {
		reason string
		r      fakeReader
		clone  Clone
		node   string
		// want is why the node is not reachable; empty when it is.
		want string
	}{
		"SameNode": {
			reason: "A template on the node itself is always reachable.",
			r:      fakeReader{templates: []pve.Resource{tpl(9000, "pve1", "qemu")}, configs: map[int]map[string]string{9000: {"scsi0": "local-lvm:base-9000-disk-0"}}, storages: storages},
			clone:  Clone{Type: pve.QEMU, Name: "tpl"}, node: "pve1",
		},
		"QemuLocalDisk": {
			reason: "qemu-server refuses a cross-node clone of a VM with a disk on local storage.",
			r:      fakeReader{templates: []pve.Resource{tpl(9000, "pve1", "qemu")}, configs: map[int]map[string]string{9000: {"scsi0": "local-lvm:base-9000-disk-0,size=8G"}}, storages: storages},
			clone:  Clone{Type: pve.QEMU, Name: "tpl"}, node: "pve2",
			want: `template "tpl" is on node pve1 with volumes on storage that is not shared (local-lvm): PVE clones it to another node only from shared storage`,
		},
		"QemuSharedDisk": {
			reason: "A VM whose disks are all on shared storage (an empty CD-ROM aside) clones anywhere.",
			r:      fakeReader{templates: []pve.Resource{tpl(9000, "pve1", "qemu")}, configs: map[int]map[string]string{9000: {"scsi0": "ceph:base-9000-disk-0", "ide2": "none,media=cdrom"}}, storages: storages},
			clone:  Clone{Type: pve.QEMU, Name: "tpl"}, node: "pve2",
		},
		"QemuISOOnLocal": {
			reason: "An ISO on local storage counts as a local volume for qemu-server's check.",
			r:      fakeReader{templates: []pve.Resource{tpl(9000, "pve1", "qemu")}, configs: map[int]map[string]string{9000: {"scsi0": "ceph:base-9000-disk-0", "ide2": "local:iso/d.iso,media=cdrom"}}, storages: storages},
			clone:  Clone{Type: pve.QEMU, Name: "tpl"}, node: "pve2",
			want: `template "tpl" is on node pve1 with volumes on storage that is not shared (local): PVE clones it to another node only from shared storage`,
		},
		"QemuSharedTargetLocalDisk": {
			reason: "For qemu-server a shared target storage does not make a local disk clonable to another node.",
			r:      fakeReader{templates: []pve.Resource{tpl(9000, "pve1", "qemu")}, configs: map[int]map[string]string{9000: {"scsi0": "local-lvm:base-9000-disk-0"}}, storages: storages},
			clone:  Clone{Type: pve.QEMU, Name: "tpl", Storage: "ceph"}, node: "pve2",
			want: `template "tpl" is on node pve1 with volumes on storage that is not shared (local-lvm): PVE clones it to another node only from shared storage`,
		},
		"LXCSharedTarget": {
			reason: "pve-container judges each mount point by the target storage: a shared one makes the clone possible.",
			r:      fakeReader{templates: []pve.Resource{tpl(9001, "pve1", "lxc")}, configs: map[int]map[string]string{9001: {"rootfs": "local-lvm:base-9001-disk-0,size=8G"}}, storages: storages},
			clone:  Clone{Type: pve.LXC, Name: "tpl", Storage: "ceph"}, node: "pve2",
		},
		"TargetNotShared": {
			reason: "A target storage that is not shared refuses every other node.",
			r:      fakeReader{templates: []pve.Resource{tpl(9001, "pve1", "lxc")}, configs: map[int]map[string]string{9001: {"rootfs": "ceph:base-9001-disk-0"}}, storages: storages},
			clone:  Clone{Type: pve.LXC, Name: "tpl", Storage: "local-lvm"}, node: "pve2",
			want: `template "tpl" is on node pve1 and the target storage "local-lvm" is not shared: PVE clones to another node only onto shared storage`,
		},
		"TargetNotOnNode": {
			reason: "A shared target storage not enabled on the node refuses it.",
			r:      fakeReader{templates: []pve.Resource{tpl(9001, "pve1", "lxc")}, configs: map[int]map[string]string{9001: {"rootfs": "ceph:base-9001-disk-0"}}, storages: storages},
			clone:  Clone{Type: pve.LXC, Name: "tpl", Storage: "ceph"}, node: "pve4",
			want: `the target storage "ceph" is not enabled on this node`,
		},
		"LowestVMIDDecides": {
			reason: "Without a template on the node the lowest VMID's is cloned, so its storage decides.",
			r: fakeReader{templates: []pve.Resource{tpl(9100, "pve4", "qemu"), tpl(9000, "pve1", "qemu")},
				configs: map[int]map[string]string{9000: {"virtio0": "ceph:base-9000-disk-0"}, 9100: {"scsi0": "local-lvm:base-9100-disk-0"}}, storages: storages},
			clone: Clone{Type: pve.QEMU, Name: "tpl"}, node: "pve2",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reach, err := Reachability(context.Background(), tc.r, tc.clone)
			if err != nil {
				t.Fatal(err)
			}
			ok, why := reach(tc.node)
			if diff := cmp.Diff(tc.want, why); diff != "" || ok != (tc.want == "") {
				t.Errorf("%s\nreach(%s): ok %v, -want, +got:\n%s", tc.reason, tc.node, ok, diff)
			}
		})
	}
}
