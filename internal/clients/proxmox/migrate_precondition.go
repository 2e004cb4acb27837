package proxmox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/luthermonson/go-proxmox"
)

// MigrationPrecondition is PVE's answer to GET /nodes/{node}/{qemu|lxc}/{vmid}/migrate
// (migrate_vm_precondition in qemu-server and pve-container): what its own GUI asks before
// it offers a migration.
type MigrationPrecondition struct {
	Running bool
	// Allowed are the nodes the guest may move to.
	Allowed []string
	// NotAllowed says why a node is not allowed. qemu-server lists every other node
	// here, an allowed one with nothing set.
	NotAllowed map[string]NodeBlockers
	// The rest is qemu-server's only.
	LocalDisks     []LocalDisk
	LocalResources []string
	Mapped         map[string]MappedResource
}

// NodeBlockers is what keeps a guest from one node.
type NodeBlockers struct {
	UnavailableStorages  []string
	UnavailableResources []string
	BlockingHAResources  []string
}

// LocalDisk is a volume of a VM on storage only its node has.
type LocalDisk struct {
	VolID     string
	CDROM     bool
	CloudInit bool
}

// MappedResource is a device reached through a cluster resource mapping.
type MappedResource struct {
	Name          string
	LiveMigration bool
}

// wirePrecondition reads both answers: qemu-server's keys use underscores, pve-container's
// dashes.
type wirePrecondition struct {
	Running          wireText                    `json:"running"`
	AllowedQemu      []string                    `json:"allowed_nodes"`
	AllowedLXC       []string                    `json:"allowed-nodes"`
	NotAllowedQemu   map[string]wireNodeBlockers `json:"not_allowed_nodes"`
	NotAllowedLXC    map[string]wireNodeBlockers `json:"not-allowed-nodes"`
	LocalDisks       []wireLocalDisk             `json:"local_disks"`
	LocalResources   []string                    `json:"local_resources"`
	MappedResourceIn map[string]struct {
		Name          string   `json:"name"`
		LiveMigration wireText `json:"live-migration"`
	} `json:"mapped-resource-info"`
}

type wireNodeBlockers struct {
	UnavailableStorages  []string `json:"unavailable_storages"`
	UnavailableResources []string `json:"unavailable-resources"`
	BlockingHAResources  []struct {
		SID   string `json:"sid"`
		Cause string `json:"cause"`
	} `json:"blocking-ha-resources"`
}

type wireLocalDisk struct {
	VolID       string   `json:"volid"`
	CDROM       wireText `json:"cdrom"`
	IsCloudInit wireText `json:"is_cloudinit"`
}

// ErrNoPrecondition is MigrationPrecondition's answer when PVE has no such endpoint (501:
// pve-container before PVE 9 has none); the migration request itself then decides.
var ErrNoPrecondition = errors.New("Proxmox VE has no migration precondition endpoint for this guest type")

// MigrationPrecondition asks PVE whether and where the guest at ref can migrate.
func (c *Client) MigrationPrecondition(ctx context.Context, ref GuestRef, target string) (MigrationPrecondition, error) {
	var raw json.RawMessage
	p := ref.path("/migrate")
	if target != "" {
		p += "?target=" + url.QueryEscape(target)
	}
	if err := c.API().Get(ctx, p, &raw); err != nil {
		if apiErr, ok := proxmox.AsAPIError(err); ok && apiErr.StatusCode == http.StatusNotImplemented {
			return MigrationPrecondition{}, ErrNoPrecondition
		}
		return MigrationPrecondition{}, errors.Wrapf(err, "cannot read the migration preconditions of %s", ref)
	}
	var w wirePrecondition
	if err := json.Unmarshal(raw, &w); err != nil {
		return MigrationPrecondition{}, errors.Wrapf(err, "cannot decode the migration preconditions of %s", ref)
	}
	return w.precondition(), nil
}

func (w wirePrecondition) precondition() MigrationPrecondition {
	p := MigrationPrecondition{Running: boolText(string(w.Running)), Allowed: append(w.AllowedQemu, w.AllowedLXC...),
		NotAllowed: map[string]NodeBlockers{}, LocalResources: w.LocalResources, Mapped: map[string]MappedResource{}}
	for _, m := range []map[string]wireNodeBlockers{w.NotAllowedQemu, w.NotAllowedLXC} {
		for node, b := range m {
			nb := NodeBlockers{UnavailableStorages: b.UnavailableStorages, UnavailableResources: b.UnavailableResources}
			for _, ha := range b.BlockingHAResources {
				nb.BlockingHAResources = append(nb.BlockingHAResources, fmt.Sprintf("%s (%s)", ha.SID, ha.Cause))
			}
			p.NotAllowed[node] = nb
		}
	}
	for _, d := range w.LocalDisks {
		p.LocalDisks = append(p.LocalDisks, LocalDisk{VolID: d.VolID, CDROM: boolText(string(d.CDROM)), CloudInit: boolText(string(d.IsCloudInit))})
	}
	for k, m := range w.MappedResourceIn {
		p.Mapped[k] = MappedResource{Name: m.Name, LiveMigration: boolText(string(m.LiveMigration))}
	}
	return p
}

// Blockers are the reasons PVE would refuse m, decided from the preconditions as PVE's own
// migrate dialog does (pve-manager www/manager6/window/Migrate.js): a target that is not
// an allowed node (storages, mapped resources or HA rules it lacks), a VM's local resources
// (PVE moves them only with force, a root@pam-only parameter the provider never sends),
// mapped devices that cannot move live with a running VM, and a local CD/DVD. Local disks
// are no blocker: they move (with-local-disks for a live migration). Empty when PVE would
// start the migration.
func (p MigrationPrecondition) Blockers(t GuestType, m Migration) []string {
	var out []string
	nb, listed := p.NotAllowed[m.Target]
	switch {
	case slices.Contains(p.Allowed, m.Target):
	case !listed:
		out = append(out, fmt.Sprintf("node %s is not another node of the cluster (allowed: %s)", m.Target, joinOrNone(p.Allowed)))
	default:
		out = append(out, nb.reasons(m.Target, p.mappedAway(m))...)
	}
	if t == LXC {
		return out
	}
	var local, notLive []string
	for _, r := range p.LocalResources {
		if _, mapped := p.Mapped[r]; !mapped {
			local = append(local, r)
		}
	}
	if len(local) > 0 {
		out = append(out, "the VM uses local resources "+strings.Join(local, ", ")+
			" (Proxmox VE moves them only with force, which only root@pam may use and the provider does not send)")
	}
	for _, k := range sortedKeys(p.Mapped) {
		if !p.Mapped[k].LiveMigration {
			notLive = append(notLive, k)
		}
	}
	if p.Running && m.Online && len(notLive) > 0 {
		out = append(out, "the running VM uses mapped resources that cannot migrate live: "+strings.Join(notLive, ", "))
	}
	for _, d := range p.LocalDisks {
		if d.CDROM && !d.CloudInit {
			out = append(out, "the VM has a local CD/DVD: "+d.VolID)
		}
	}
	return out
}

// mappedAway are the storages of local volumes, which a target storage replaces on the
// target (shared ones keep their storage).
func (p MigrationPrecondition) mappedAway(m Migration) map[string]bool {
	out := map[string]bool{}
	if m.TargetStorage == "" {
		return out
	}
	for _, d := range p.LocalDisks {
		if st, _, ok := strings.Cut(d.VolID, ":"); ok {
			out[st] = true
		}
	}
	return out
}

// reasons says why node is not allowed, leaving out storages a target storage replaces.
func (nb NodeBlockers) reasons(node string, mappedAway map[string]bool) []string {
	var out, storages []string
	for _, s := range nb.UnavailableStorages {
		if !mappedAway[s] {
			storages = append(storages, s)
		}
	}
	if len(storages) > 0 {
		out = append(out, fmt.Sprintf("storages %s are not available on node %s", strings.Join(storages, ", "), node))
	}
	if len(nb.UnavailableResources) > 0 {
		out = append(out, fmt.Sprintf("mapped resources %s are not available on node %s", strings.Join(nb.UnavailableResources, ", "), node))
	}
	if len(nb.BlockingHAResources) > 0 {
		out = append(out, fmt.Sprintf("HA resources %s keep it off node %s", strings.Join(nb.BlockingHAResources, ", "), node))
	}
	return out
}

func joinOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
