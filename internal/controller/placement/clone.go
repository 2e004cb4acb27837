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
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// Reader is what a placement reads from Proxmox VE (*pve.Client answers).
type Reader interface {
	ClusterNodes(ctx context.Context) ([]pve.NodeUsage, error)
	ClusterStorages(ctx context.Context) ([]pve.StorageShare, error)
	CachedClusterResources(ctx context.Context, maxAge time.Duration) ([]pve.Resource, error)
	GuestPending(ctx context.Context, ref pve.GuestRef) (pve.GuestConfig, error)
}

var _ Reader = (*pve.Client)(nil)

// Clone is the template a guest is cloned from.
type Clone struct {
	Type pve.GuestType
	// Name of the template in Proxmox VE.
	Name string
	// Storage is the clone's target storage ("" keeps the template's).
	Storage string
}

// CloneOf is the template a guest of type typ is cloned from, nil when it is
// not cloned from a template named here (created from scratch, or from a
// name resolved elsewhere): no node is then refused for the template's sake.
// PVE takes a target storage for full clones only.
func CloneOf(typ pve.GuestType, name string, full bool, storage string) *Clone {
	if name == "" {
		return nil
	}
	c := &Clone{Type: typ, Name: name}
	if full {
		c.Storage = storage
	}
	return c
}

// Reachability returns whether the template can be cloned to a node, and
// why not. The provider clones the template of that name on the node when
// there is one, else the one of lowest VMID (guest.FindTemplate): only that
// one's storage decides.
func Reachability(ctx context.Context, r Reader, c Clone) (func(node string) (bool, string), error) {
	rows, err := r.CachedClusterResources(ctx, guest.TemplateListingAge)
	if err != nil {
		return nil, errors.Wrap(err, "cannot list the templates for placement")
	}
	on, err := guest.TemplatesNamed(rows, c.Name, c.Type)
	if err != nil {
		return nil, err
	}
	sort.Slice(on, func(i, j int) bool { return on[i].VMID < on[j].VMID })
	src := on[0]
	cfg, err := r.GuestPending(ctx, src)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot read template %q (%s) for placement", c.Name, src)
	}
	storages, err := r.ClusterStorages(ctx)
	if err != nil {
		return nil, errors.Wrap(err, "cannot list the storages for placement")
	}
	why := crossNodeRefusal(c, src, volumeStorages(c.Type, cfg), storages)
	return func(node string) (bool, string) {
		if slices.ContainsFunc(on, func(t pve.GuestRef) bool { return t.Node == node }) {
			return true, ""
		}
		if msg := why(node); msg != "" {
			return false, msg
		}
		return true, ""
	}, nil
}

// crossNodeRefusal says why PVE would refuse to clone src to another node,
// or "". Both qemu-server and pve-container refuse a target storage that
// is not shared or not enabled on the target node ("can't clone to
// non-shared storage"). qemu-server (src/PVE/API2/Qemu.pm clone_vm,
// $check_storage_access_clone) also needs every volume of the source on
// shared storage whatever the target storage ("can't clone VM to node ...
// (VM uses local storage)"); pve-container (src/PVE/API2/LXC.pm clone_vm)
// judges each mount point by the target storage when one is given.
func crossNodeRefusal(c Clone, src pve.GuestRef, used []string, rows []pve.StorageShare) func(node string) string {
	shared := map[string]bool{}
	enabled := map[string]bool{}
	for _, s := range rows {
		shared[s.Storage] = shared[s.Storage] || s.Shared
		enabled[s.Node+"/"+s.Storage] = true
	}
	var local []string
	if c.Storage == "" || c.Type == pve.QEMU {
		for _, id := range used {
			if !shared[id] {
				local = append(local, id)
			}
		}
	}
	return func(node string) string {
		switch {
		case c.Storage != "" && !shared[c.Storage]:
			return fmt.Sprintf("template %q is on node %s and the target storage %q is not shared: PVE clones to another node only onto shared storage", c.Name, src.Node, c.Storage)
		case c.Storage != "" && !enabled[node+"/"+c.Storage]:
			return fmt.Sprintf("the target storage %q is not enabled on this node", c.Storage)
		case len(local) > 0:
			return fmt.Sprintf("template %q is on node %s with volumes on storage that is not shared (%s): PVE clones it to another node only from shared storage",
				c.Name, src.Node, strings.Join(local, ", "))
		}
		return ""
	}
}

// qemuVolumeKey are the QEMU config keys holding volumes (PVE's drive keys:
// foreach_volume skips unused ones for a clone).
var qemuVolumeKey = regexp.MustCompile(`^(ide|sata|scsi|virtio)\d+$|^(efidisk|tpmstate)0$`)

// lxcVolumeKey are an LXC config's mount points.
var lxcVolumeKey = regexp.MustCompile(`^(rootfs|mp\d+)$`)

// volumeStorages are the storage IDs the guest's volumes live on, sorted,
// each once. A CD-ROM drive with no medium ("none") or the host's drive
// ("cdrom") holds no volume; an ISO does, and counts for qemu-server.
func volumeStorages(t pve.GuestType, cfg pve.GuestConfig) []string {
	keyRe := qemuVolumeKey
	if t == pve.LXC {
		keyRe = lxcVolumeKey
	}
	var ids []string
	for key := range cfg {
		v, ok := cfg.Current(key)
		if !ok || !keyRe.MatchString(key) {
			continue
		}
		if id := volumeStorage(v); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// volumeStorage is the storage of a drive or mount point value
// ("local-lvm:vm-100-disk-0,size=8G", "volume=..."), or "" when it names
// no storage volume.
func volumeStorage(v string) string {
	first, _, _ := strings.Cut(v, ",")
	first = strings.TrimPrefix(first, "volume=")
	first = strings.TrimPrefix(first, "file=")
	id, _, ok := strings.Cut(first, ":")
	if !ok || id == "" || strings.HasPrefix(first, "/") {
		return ""
	}
	return id
}
