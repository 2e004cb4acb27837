package proxmox

import (
	"context"
	"encoding/json"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// NodeUsage is one node row of GET /cluster/resources?type=node. pve-manager
// (PVE/API2Tools.pm extract_node_stats) says "online" only for a cluster
// member that is online and reports figures, "offline" for a member known
// to be down, "unknown" otherwise; maxmem and mem are left out for a token
// without Sys.Audit on the node, and mem for a node that is not online.
type NodeUsage struct {
	Node   string
	Status string
	MaxMem int64
	Mem    int64
}

// Online reports whether PVE says the node is online.
func (n NodeUsage) Online() bool { return n.Status == "online" }

// StorageShare is one storage row of GET /cluster/resources?type=storage:
// a storage as enabled on one node, and whether it is shared (the same
// volumes seen from every node).
type StorageShare struct {
	Storage string
	Node    string
	Shared  bool
}

// ClusterNodes lists the cluster's nodes with their memory figures. The
// listing is kept per connection for a few seconds (as the create
// prerequisites' listings are), so the placements of a burst of creates
// cost one request.
func (c *Client) ClusterNodes(ctx context.Context) ([]NodeUsage, error) {
	rows, err := c.clusterRows(ctx, "node")
	if err != nil {
		return nil, err
	}
	out := make([]NodeUsage, 0, len(rows))
	for _, r := range rows {
		out = append(out, NodeUsage{Node: r.text("node"), Status: r.text("status"), MaxMem: r.int("maxmem"), Mem: r.int("mem")})
	}
	return out, nil
}

// ClusterStorages lists every storage of every node with its shared flag,
// kept like ClusterNodes.
func (c *Client) ClusterStorages(ctx context.Context) ([]StorageShare, error) {
	rows, err := c.clusterRows(ctx, "storage")
	if err != nil {
		return nil, err
	}
	out := make([]StorageShare, 0, len(rows))
	for _, r := range rows {
		out = append(out, StorageShare{Storage: r.text("storage"), Node: r.text("node"), Shared: boolText(r.text("shared"))})
	}
	return out, nil
}

// rawRow is a listing row whose fields are decoded one by one, tolerant of
// PVE's numbers-for-booleans and strings-for-numbers.
type rawRow map[string]json.RawMessage

func (r rawRow) text(key string) string {
	var v wireText
	if raw, ok := r[key]; ok {
		_ = json.Unmarshal(raw, &v)
	}
	return string(v)
}

func (r rawRow) int(key string) int64 {
	var v wireInt
	if raw, ok := r[key]; ok {
		_ = json.Unmarshal(raw, &v)
	}
	return int64(v)
}

// clusterRows reads /cluster/resources of one type through the listing
// memo: a failed read is not kept.
func (c *Client) clusterRows(ctx context.Context, typ string) ([]rawRow, error) {
	rows, err := c.listingRows(ctx, "/cluster/resources?type="+typ)
	if err != nil {
		return nil, c.redact(errors.Wrapf(err, "cannot list the cluster's %ss", typ))
	}
	return rows, nil
}
