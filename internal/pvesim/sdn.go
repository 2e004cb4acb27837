package pvesim

import (
	"crypto/sha1" //nolint:gosec // PVE's config digests are SHA-1; nothing is protected by it
	"encoding/hex"
	"net/http"
	"regexp"
	"strconv"
)

// VNet is an SDN VNet of the cluster (pve-network src/PVE/Network/SDN/VnetPlugin.pm): a
// bridge every node has once the SDN configuration is applied. The simulator models zones
// spanning every node, new VNets not applied yet (Pending) but no pending changes to applied
// ones, and no ACLs: every user sees them all, where PVE lists only those the user has
// SDN.Audit or SDN.Allocate on (/sdn/zones/<zone>/<vnet>).
type VNet struct {
	VNet      string `json:"vnet"`
	Zone      string `json:"zone"`
	Tag       int    `json:"tag,omitempty"`
	Alias     string `json:"alias,omitempty"`
	VlanAware bool   `json:"vlanaware,omitempty"`
	// Pending is a VNet in the SDN configuration that was not applied yet: no node has it.
	Pending bool `json:"pending,omitempty"`
}

// keys are the VNet's section keys as its configuration holds them.
func (v VNet) keys() map[string]any {
	m := map[string]any{"zone": v.Zone}
	if v.Tag != 0 {
		m["tag"] = v.Tag
	}
	if v.Alias != "" {
		m["alias"] = v.Alias
	}
	if v.VlanAware {
		m["vlanaware"] = 1
	}
	return m
}

// reVNetID is VnetPlugin's vnet ID (pve-sdn-vnet-id): a letter, then letters and digits, at
// least two and at most eight characters.
var reVNetID = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9]*[a-zA-Z0-9]$`)

const maxVNetIDLength = 8

// AddVNet adds a VNet to the cluster's SDN configuration, applied unless v.Pending, replacing
// one of the same name.
func (s *Server) AddVNet(v VNet) error {
	if len(v.VNet) > maxVNetIDLength || !reVNetID.MatchString(v.VNet) {
		return errf(http.StatusBadRequest, "invalid vnet ID %q: a letter, then letters or digits, 2 to %d characters", v.VNet, maxVNetIDLength)
	}
	if v.Zone == "" {
		return errf(http.StatusBadRequest, "vnet %q needs a zone", v.VNet)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.vnets[v.VNet] = v
	return nil
}

// handleVNetIndex follows pve-network src/PVE/API2/Network/SDN/Vnets.pm, index: the VNets
// sorted by ID, each its section's keys plus vnet, type and the digest of the file it was
// read from. The default view is the configuration (pending VNets included, as plain rows);
// running=1 the running configuration, which has no digest (null) and no pending VNets;
// pending=1 their merge (PVE/Network/SDN.pm, pending_config): applied VNets as they run, a
// new one with only vnet and type at the top, its keys under "pending" and state "new".
func handleVNetIndex(s *Server, r *request) (any, error) {
	running, pending := r.bool("running"), r.bool("pending")
	var digest any
	if !running && !pending {
		digest = s.st.vnetsDigest()
	}
	out := make([]map[string]any, 0, len(s.st.vnets))
	for _, id := range sortedKeys(s.st.vnets) {
		v := s.st.vnets[id]
		row := v.keys()
		switch {
		case v.Pending && running && !pending:
			continue
		case v.Pending && pending:
			row = map[string]any{"pending": row, "state": "new"}
		}
		row["vnet"], row["type"], row["digest"] = v.VNet, "vnet", digest
		out = append(out, row)
	}
	return out, nil
}

// vnetsDigest is the SHA-1 of the VNets as /etc/pve/sdn/vnets.cfg would hold them.
func (st *state) vnetsDigest() string {
	h := sha1.New() //nolint:gosec // see the import
	for _, id := range sortedKeys(st.vnets) {
		v := st.vnets[id]
		_, _ = h.Write([]byte("vnet: " + id + "\n\tzone " + v.Zone + "\n\ttag " + strconv.Itoa(v.Tag) + "\n\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// localVNets are the node network listing's rows for the VNets (pve-network
// src/PVE/Network/SDN.pm, get_local_vnets, added by pve-manager PVE/API2/Network.pm for the
// types any_bridge, include_sdn and vnet).
func (st *state) localVNets() []map[string]any {
	ids := sortedKeys(st.vnets)
	out := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		v := st.vnets[id]
		if v.Pending {
			continue
		}
		out = append(out, map[string]any{"iface": id, "type": "vnet", "active": "1", "ipam": 0,
			"vlanaware": boolNum(v.VlanAware), "comments": v.Alias})
	}
	return out
}

// isVNet reports whether name is an applied VNet, which every node has as a bridge.
func (st *state) isVNet(name string) bool {
	v, ok := st.vnets[name]
	return ok && !v.Pending
}
