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
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

const gib = int64(1) << 30

// fourNodes: pve1 has 40 GiB free, pve2 50, pve3 is offline (figures kept,
// as PVE keeps maxmem), pve4 20.
var fourNodes = []pve.NodeUsage{
	{Node: "pve1", Status: "online", MaxMem: 64 * gib, Mem: 24 * gib},
	{Node: "pve2", Status: "online", MaxMem: 64 * gib, Mem: 14 * gib},
	{Node: "pve3", Status: "offline", MaxMem: 128 * gib},
	{Node: "pve4", Status: "online", MaxMem: 32 * gib, Mem: 12 * gib},
}

func TestChoose(t *testing.T) {
	onlyOn := func(node string) func(string) (bool, string) {
		return func(n string) (bool, string) {
			if n == node {
				return true, ""
			}
			return false, "template on " + node + " uses local storage"
		}
	}
	cases := map[string]struct {
		reason string
		req    Request
		want   Decision
		err    error
	}{
		"MostFreeMemory": {
			reason: "Among online allowed nodes the one with the most free memory wins; the offline one is skipped and said so.",
			req:    Request{Allowed: []string{"pve1", "pve2", "pve3", "pve4"}, Nodes: fourNodes},
			want: Decision{Node: "pve2", Reason: "most free memory (51200 MiB); skipped pve3: status offline",
				Skipped: []Skip{{Node: "pve3", Why: "status offline"}}},
		},
		"OnlyAllowed": {
			reason: "A node that is not allowed is never picked, however much memory it has.",
			req:    Request{Allowed: []string{"pve4", "pve1"}, Nodes: fourNodes},
			want:   Decision{Node: "pve1", Reason: "most free memory (40960 MiB)"},
		},
		"UnknownNode": {
			reason: "An allowed name the cluster does not list is skipped with that reason.",
			req:    Request{Allowed: []string{"nosuch", "pve4"}, Nodes: fourNodes},
			want: Decision{Node: "pve4", Reason: "most free memory (20480 MiB); skipped nosuch: not a node of the cluster",
				Skipped: []Skip{{Node: "nosuch", Why: "not a node of the cluster"}}},
		},
		"TemplateReach": {
			reason: "A node the template cannot be cloned to is not eligible, and the reason says why.",
			req:    Request{Allowed: []string{"pve1", "pve2"}, Nodes: fourNodes, Reachable: onlyOn("pve1")},
			want: Decision{Node: "pve1", Reason: "most free memory (40960 MiB); skipped pve2: template on pve1 uses local storage",
				Skipped: []Skip{{Node: "pve2", Why: "template on pve1 uses local storage"}}},
		},
		"Spread": {
			reason: "With a spread the node holding the fewest of the set's VMs wins over more free memory.",
			req:    Request{Allowed: []string{"pve1", "pve2", "pve4"}, Nodes: fourNodes, Count: map[string]int{"pve1": 1, "pve2": 1}},
			want:   Decision{Node: "pve4", Reason: "fewest of the set's VMs (0), then most free memory (20480 MiB)"},
		},
		"NoFigures": {
			reason: "Without memory figures (a token lacking Sys.Audit) nodes with figures come first, then by name.",
			req:    Request{Allowed: []string{"b", "a"}, Nodes: []pve.NodeUsage{{Node: "a", Status: "online"}, {Node: "b", Status: "online"}}},
			want:   Decision{Node: "a", Reason: "no node reported memory figures (Sys.Audit on /nodes is needed for them): first by name"},
		},
		"NoneEligible": {
			reason: "With no eligible node the error names each node and why, and wraps ErrNoEligibleNode.",
			req:    Request{Allowed: []string{"pve3", "pve2", "pve3"}, Nodes: fourNodes, Reachable: onlyOn("pve1")},
			want:   Decision{Skipped: []Skip{{Node: "pve3", Why: "status offline"}, {Node: "pve2", Why: "template on pve1 uses local storage"}}},
			err:    ErrNoEligibleNode,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Choose(tc.req)
			if diff := cmp.Diff(tc.err, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s\nChoose(...): -want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nChoose(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestNoEligibleErrorNamesEachNode(t *testing.T) {
	_, err := Choose(Request{Allowed: []string{"pve3", "gone"}, Nodes: fourNodes})
	want := "no allowed node can take the guest: pve3: status offline; gone: not a node of the cluster"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("The condition's message names every node and why: -want, +got:\n%s", diff)
	}
}

// A set spread one VM at a time never gets two more VMs on one node than
// on another (skew at most 1) and skips the offline node.
func TestSpreadSkew(t *testing.T) {
	count := map[string]int{}
	v := View{req: Request{Nodes: fourNodes}}
	for range 7 {
		d, err := v.Choose([]string{"pve1", "pve2", "pve3", "pve4"}, count)
		if err != nil {
			t.Fatal(err)
		}
		count[d.Node]++
	}
	want := map[string]int{"pve1": 2, "pve2": 3, "pve4": 2}
	if diff := cmp.Diff(want, count); diff != "" {
		t.Errorf("7 VMs over 3 online nodes: -want, +got:\n%s", diff)
	}
}

// A node that ranks first but lacks what the guest needs is skipped with
// the check's reason and the next best is taken; only the nodes tried are
// checked; a check that cannot tell fails the choice.
func TestChooseChecked(t *testing.T) {
	v := View{req: Request{Nodes: fourNodes}}
	var checked []string
	noBridge := func(_ context.Context, node string) (string, error) {
		checked = append(checked, node)
		if node == "pve2" {
			return `bridge "vmbr9" does not exist on node "pve2"`, nil
		}
		return "", nil
	}
	d, err := v.ChooseChecked(context.Background(), []string{"pve1", "pve2", "pve3", "pve4"}, nil, noBridge)
	want := Decision{Node: "pve1", Reason: `most free memory (40960 MiB); skipped pve2: bridge "vmbr9" does not exist on node "pve2"; pve3: status offline`,
		Skipped: []Skip{{Node: "pve2", Why: `bridge "vmbr9" does not exist on node "pve2"`}, {Node: "pve3", Why: "status offline"}}}
	if diff := cmp.Diff(want, d); diff != "" || err != nil {
		t.Errorf("ChooseChecked: %v, -want, +got:\n%s", err, diff)
	}
	if diff := cmp.Diff([]string{"pve2", "pve1"}, checked); diff != "" {
		t.Errorf("nodes checked: -want, +got:\n%s", diff)
	}
	errUnreadable := errors.New("cannot read")
	_, err = v.ChooseChecked(context.Background(), []string{"pve1"}, nil, func(context.Context, string) (string, error) { return "", errUnreadable })
	if diff := cmp.Diff(errUnreadable, err, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("a check that fails: -want, +got:\n%s", diff)
	}
}
