package pvesim

import (
	"crypto/sha1" //nolint:gosec // PVE's config digests are SHA-1; nothing is protected by it
	"encoding/hex"
	"net/http"
	"regexp"
	"strconv"
)

// VNet is an SDN VNet of the cluster (pve-network src/PVE/Network/SDN/VnetPlugin.pm): a
// bridge every node of its zone has once the SDN configuration is applied. The simulator
// models applied VNets only (no pending changes) and no ACLs: every user sees them all, where
// PVE lists only those the user has SDN.Audit or SDN.Allocate on (/sdn/zones/<zone>/<vnet>).
type VNet struct {
	VNet      string `json:"vnet"`
	Zone      string `json:"zone"`
	Tag       int    `json:"tag,omitempty"`
	Alias     string `json:"alias,omitempty"`
	VlanAware bool   `json:"vlanaware,omitempty"`
}

// reVNetID is VnetPlugin's vnet ID (pve-sdn-vnet-id): a letter, then letters and digits, at
// least two and at most eight characters.
var reVNetID = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9]*[a-zA-Z0-9]$`)

const maxVNetIDLength = 8

func registerSDNRoutes(r *router) {
	r.handle(RouteSpec{Method: http.MethodGet, Path: "/cluster/sdn/vnets", Params: []ParamSpec{
		pBool("pending"), pBool("running"),
	}}, handleVNetIndex)
}

// AddVNet adds an applied VNet to the cluster's SDN configuration, replacing one of the same
// name.
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
// read from. The running and pending views come from the running configuration, which
// carries no digest (null); for applied VNets they hold the same keys and no state.
func handleVNetIndex(s *Server, r *request) (any, error) {
	var digest any
	if !r.bool("running") && !r.bool("pending") {
		digest = s.st.vnetsDigest()
	}
	out := []map[string]any{}
	for _, id := range sortedKeys(s.st.vnets) {
		v := s.st.vnets[id]
		row := map[string]any{"vnet": v.VNet, "type": "vnet", "zone": v.Zone, "digest": digest}
		if v.Tag != 0 {
			row["tag"] = v.Tag
		}
		if v.Alias != "" {
			row["alias"] = v.Alias
		}
		if v.VlanAware {
			row["vlanaware"] = 1
		}
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
		out = append(out, map[string]any{"iface": id, "type": "vnet", "active": "1", "ipam": 0,
			"vlanaware": boolNum(v.VlanAware), "comments": v.Alias})
	}
	return out
}

// isVNet reports whether name is a VNet, which every node has as a bridge.
func (st *state) isVNet(name string) bool {
	_, ok := st.vnets[name]
	return ok
}
