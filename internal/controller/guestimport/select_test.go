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
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

func TestMatches(t *testing.T) {
	vm := pve.Resource{Type: "qemu", VMID: 150, Node: "pve1", Name: "web-01", Pool: "prod", Tags: "web;linux"}
	tpl := vm
	tpl.Template = true
	ct := vm
	ct.Type = "lxc"
	cases := map[string]struct {
		reason string
		row    pve.Resource
		sel    v1alpha1.GuestSelector
		want   bool
	}{
		"EmptySelectsVMs":        {reason: "An empty selector selects every VM.", row: vm, want: true},
		"NotTemplates":           {reason: "Templates only when asked.", row: tpl, want: false},
		"TemplatesWhenAsked":     {reason: "includeTemplates selects them.", row: tpl, sel: v1alpha1.GuestSelector{IncludeTemplates: true}, want: true},
		"NotContainersByDefault": {reason: "Containers only when types names lxc.", row: ct, want: false},
		"ContainersWhenAsked":    {reason: "types lxc selects containers.", row: ct, sel: v1alpha1.GuestSelector{Types: []v1alpha1.ImportGuestType{"lxc"}}, want: true},
		"NodeAny":                {reason: "Any of the nodes.", row: vm, sel: v1alpha1.GuestSelector{Nodes: []string{"pve2", "pve1"}}, want: true},
		"NodeOther":              {reason: "Another node does not match.", row: vm, sel: v1alpha1.GuestSelector{Nodes: []string{"pve2"}}, want: false},
		"PoolOther":              {reason: "Another pool does not match.", row: vm, sel: v1alpha1.GuestSelector{Pools: []string{"dev"}}, want: false},
		"TagsAll":                {reason: "Every tag must be carried.", row: vm, sel: v1alpha1.GuestSelector{Tags: []string{"web", "linux"}}, want: true},
		"TagMissing":             {reason: "A missing tag excludes.", row: vm, sel: v1alpha1.GuestSelector{Tags: []string{"web", "db"}}, want: false},
		"Pattern":                {reason: "A shell pattern on the name.", row: vm, sel: v1alpha1.GuestSelector{NamePattern: "web-*"}, want: true},
		"PatternNoMatch":         {reason: "A pattern that does not match excludes.", row: vm, sel: v1alpha1.GuestSelector{NamePattern: "db-*"}, want: false},
		"BadPattern":             {reason: "A malformed pattern matches nothing.", row: vm, sel: v1alpha1.GuestSelector{NamePattern: "web-["}, want: false},
		"InRange":                {reason: "Any of the ranges, inclusive.", row: vm, sel: v1alpha1.GuestSelector{VMIDRanges: []v1alpha1.VMIDRange{{From: 100, To: 120}, {From: 150, To: 150}}}, want: true},
		"OutOfRange":             {reason: "Outside every range excludes.", row: vm, sel: v1alpha1.GuestSelector{VMIDRanges: []v1alpha1.VMIDRange{{From: 100, To: 149}}}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, matches(tc.row, tc.sel)); diff != "" {
				t.Errorf("%s\nmatches(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestResourceName(t *testing.T) {
	cases := map[string]struct {
		reason string
		guest  string
		vmid   int
		want   string
		wantID string
	}{
		"Plain": {reason: "A DNS name stays.", guest: "web-01", vmid: 101, want: "web-01", wantID: "web-01-101"},
		"Mixed": {reason: "Upper case and dots become DNS-safe.", guest: "Web.01_prod", vmid: 102, want: "web-01-prod", wantID: "web-01-prod-102"},
		"Empty": {reason: "Nothing usable gives vm-<vmid>.", guest: "__", vmid: 103, want: "vm-103", wantID: "vm-103-103"},
		"Long": {reason: "A long name is cut to a DNS label, the VMID kept whole.", guest: "a234567890123456789012345678901234567890123456789012345678901234567890", vmid: 104,
			want: "a23456789012345678901234567890123456789012345678901234567890123", wantID: "a2345678901234567890123456789012345678901234567890123456789-104"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := resourceName(tc.guest, tc.vmid)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nresourceName(): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantID, withVMID(got, tc.vmid)); diff != "" {
				t.Errorf("%s\nwithVMID(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
