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
	"fmt"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// ErrNoEligibleNode means no allowed node can take the guest; the error
// names each node and why it was skipped.
var ErrNoEligibleNode = errors.New("no allowed node can take the guest")

// NoEligibleError names each allowed node and why it was skipped; it is
// ErrNoEligibleNode for errors.Is.
type NoEligibleError struct {
	Skipped []Skip
}

// Error names each skipped node and why.
func (e NoEligibleError) Error() string {
	return ErrNoEligibleNode.Error() + ": " + SkipList(e.Skipped)
}

// Is makes errors.Is(err, ErrNoEligibleNode) hold.
func (e NoEligibleError) Is(target error) bool { return target == ErrNoEligibleNode }

// Request is what one placement is decided from.
type Request struct {
	// Allowed are the nodes the spec allows, in its order.
	Allowed []string
	// Nodes are the cluster's node rows.
	Nodes []pve.NodeUsage
	// Reachable says, for a clone, whether the template can be cloned to
	// a node, and why not; nil when nothing is cloned.
	Reachable func(node string) (bool, string)
	// Count is how many of a set's VMs each node holds; nil without a
	// spread.
	Count map[string]int
	// Excluded are nodes found unfit after ranking (what the guest needs
	// is missing there), with why.
	Excluded map[string]string
}

// Skip is an allowed node that was not eligible, and why.
type Skip struct {
	Node string
	Why  string
}

// Decision is the node picked, why, and the allowed nodes left out.
type Decision struct {
	Node    string
	Reason  string
	Skipped []Skip
}

// candidate is an eligible node with what ranks it.
type candidate struct {
	node  string
	free  int64
	known bool // PVE gave memory figures
	count int
}

// Choose picks the node for one guest, or fails wrapping ErrNoEligibleNode
// with each allowed node's reason.
func Choose(r Request) (Decision, error) {
	cands, skipped := eligible(r)
	if len(cands) == 0 {
		return Decision{Skipped: skipped}, NoEligibleError{Skipped: skipped}
	}
	sort.SliceStable(cands, func(i, j int) bool { return better(cands[i], cands[j]) })
	best := cands[0]
	return Decision{Node: best.node, Reason: reason(best, r.Count != nil, skipped), Skipped: skipped}, nil
}

// eligible splits the allowed nodes into candidates and skipped ones.
func eligible(r Request) ([]candidate, []Skip) {
	rows := make(map[string]pve.NodeUsage, len(r.Nodes))
	for _, n := range r.Nodes {
		rows[n.Node] = n
	}
	var cands []candidate
	var skipped []Skip
	seen := map[string]bool{}
	for _, name := range r.Allowed {
		if seen[name] {
			continue
		}
		seen[name] = true
		row, ok := rows[name]
		why := unfit(row, ok)
		if why == "" {
			why = r.Excluded[name]
		}
		if why != "" {
			skipped = append(skipped, Skip{Node: name, Why: why})
			continue
		}
		if r.Reachable != nil {
			if can, why := r.Reachable(name); !can {
				skipped = append(skipped, Skip{Node: name, Why: why})
				continue
			}
		}
		cands = append(cands, candidate{node: name, free: row.MaxMem - row.Mem, known: row.MaxMem > 0, count: r.Count[name]})
	}
	return cands, skipped
}

// unfit says why a node row rules the node out, or "".
func unfit(row pve.NodeUsage, listed bool) string {
	switch {
	case !listed:
		return "not a node of the cluster"
	case !row.Online():
		return "status " + orUnknown(row.Status)
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// better ranks a before b: fewer of the set's VMs, then known memory
// figures, then more free memory, then the node's name for a stable
// choice.
func better(a, b candidate) bool {
	switch {
	case a.count != b.count:
		return a.count < b.count
	case a.known != b.known:
		return a.known
	case a.free != b.free:
		return a.free > b.free
	}
	return a.node < b.node
}

// reason is the status text of a decision.
func reason(c candidate, spread bool, skipped []Skip) string {
	var b strings.Builder
	if spread {
		fmt.Fprintf(&b, "fewest of the set's VMs (%d), then ", c.count)
	}
	if c.known {
		fmt.Fprintf(&b, "most free memory (%d MiB)", c.free>>20)
	} else {
		b.WriteString("no node reported memory figures (Sys.Audit on /nodes is needed for them): first by name")
	}
	if len(skipped) > 0 {
		b.WriteString("; skipped " + SkipList(skipped))
	}
	return b.String()
}

// SkipList names each skipped node and why.
func SkipList(skipped []Skip) string {
	parts := make([]string, len(skipped))
	for i, s := range skipped {
		parts[i] = s.Node + ": " + s.Why
	}
	return strings.Join(parts, "; ")
}
