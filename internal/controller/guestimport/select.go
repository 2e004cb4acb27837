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

package guestimport

import (
	"path"
	"slices"
	"sort"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// selected lists the guests of rows the selector chooses, by VMID.
func selected(rows []pve.Resource, s v1alpha1.GuestSelector) []pve.Resource {
	var out []pve.Resource
	for _, r := range rows {
		if matches(r, s) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].VMID < out[j].VMID })
	return out
}

// matches reports whether a /cluster/resources row is a guest the selector
// chooses: every field that is set narrows.
func matches(r pve.Resource, s v1alpha1.GuestSelector) bool {
	return typeSelected(r.Type, s.Types) &&
		(!r.Template || s.IncludeTemplates) &&
		(len(s.Nodes) == 0 || slices.Contains(s.Nodes, r.Node)) &&
		(len(s.Pools) == 0 || slices.Contains(s.Pools, r.Pool)) &&
		hasAllTags(r.TagList(), s.Tags) &&
		named(r.Name, s.NamePattern) &&
		inRanges(int64(r.VMID), s.VMIDRanges)
}

func typeSelected(t string, types []v1alpha1.ImportGuestType) bool {
	if len(types) == 0 {
		return t == string(v1alpha1.ImportGuestQEMU)
	}
	return slices.Contains(types, v1alpha1.ImportGuestType(t))
}

func hasAllTags(have, want []string) bool {
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

// named matches a shell pattern; a malformed pattern matches nothing (the
// status says no guest matched rather than importing everything).
func named(name, pattern string) bool {
	if pattern == "" {
		return true
	}
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

func inRanges(vmid int64, ranges []v1alpha1.VMIDRange) bool {
	if len(ranges) == 0 {
		return true
	}
	for _, r := range ranges {
		if vmid >= r.From && vmid <= r.To {
			return true
		}
	}
	return false
}
