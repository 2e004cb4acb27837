package proxmox

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	proxmox "github.com/luthermonson/go-proxmox"
)

// Prerequisites are what a guest about to be created needs to exist on its node;
// PVE would otherwise refuse the create, or fail its task (a missing ISO)
// or the first start (a missing bridge), only after a VMID was taken.
type Prerequisites struct {
	Node string
	// DiskStorages must exist on Node and hold VM disks (content images).
	DiskStorages []string
	// Volumes (e.g. "local:iso/debian.iso") must exist on Node.
	Volumes []string
	// Bridges must exist on Node, as a Linux or OVS bridge or an SDN VNet.
	Bridges []string
}

// ErrMissingPrerequisite marks Prerequisites that PVE cannot satisfy: the
// user's spec names something that does not exist.
var ErrMissingPrerequisite = errors.New("cannot create in Proxmox VE")

// CheckPrerequisites checks p before anything is created, so a spec naming a
// node, storage, volume or bridge that does not exist is refused in seconds
// with what does exist. A check whose read fails (a token without
// Sys.Audit, say) is skipped: PVE decides then; except the SDN VNets'
// (see sdnVNets), read only to refuse a bridge no node listing holds. It
// costs one request for the node list, one for the node's storages when
// disks or volumes are named, one per storage holding a named volume, one
// for the node's bridges when bridges are named and one for the VNets when
// a bridge is not the node's; listings are kept for listingTTL, so a
// burst of creates costs them once, but a refusal is never based on a kept
// listing: what is missing may have been made since.
func (c *Client) CheckPrerequisites(ctx context.Context, p Prerequisites) error {
	err := c.checkPrerequisites(ctx, p)
	if errors.Is(err, ErrMissingPrerequisite) {
		c.listings.forget()
		err = c.checkPrerequisites(ctx, p)
	}
	return err
}

func (c *Client) checkPrerequisites(ctx context.Context, p Prerequisites) error {
	nodes, err := c.preflightNames(ctx, "/nodes", "node", nil)
	if err == nil && !slices.Contains(nodes, p.Node) {
		return missingPrerequisite("node %q is not in the Proxmox VE cluster (nodes: %s)", p.Node, listed(nodes))
	}
	if err := c.checkStorages(ctx, p); err != nil {
		return err
	}
	return c.checkBridges(ctx, p.Node, p.Bridges)
}

func missingPrerequisite(format string, args ...any) error {
	return errors.Wrapf(ErrMissingPrerequisite, format, args...)
}

func (c *Client) checkStorages(ctx context.Context, p Prerequisites) error {
	if len(p.DiskStorages) == 0 && len(p.Volumes) == 0 {
		return nil
	}
	ids, err := c.preflightNames(ctx, "/nodes/"+url.PathEscape(p.Node)+"/storage", "storage", nil)
	if err != nil {
		return nil //nolint:nilerr // an unreadable listing decides nothing: PVE will
	}
	kinds, _ := c.preflightNames(ctx, "/nodes/"+url.PathEscape(p.Node)+"/storage", "content", nil)
	content := make(map[string][]string, len(ids))
	for i, id := range ids {
		content[id] = strings.Split(kinds[i], ",")
	}
	for _, id := range p.DiskStorages {
		kinds, ok := content[id]
		switch {
		case !ok:
			return missingPrerequisite("storage %q does not exist on node %q (storages: %s)", id, p.Node, listed(ids))
		case !slices.Contains(kinds, "images"):
			return missingPrerequisite("storage %q on node %q does not hold VM disks (its content: %s)", id, p.Node, strings.Join(kinds, ","))
		}
	}
	for _, vol := range p.Volumes {
		if err := c.checkVolume(ctx, p.Node, vol, content, ids); err != nil {
			return err
		}
	}
	return nil
}

// checkVolume checks that volid ("storage:iso/name.iso") is listed on its
// storage.
func (c *Client) checkVolume(ctx context.Context, node, volid string, content map[string][]string, ids []string) error {
	storage, name, ok := strings.Cut(volid, ":")
	if !ok || storage == "" {
		return missingPrerequisite("volume %q is not a Proxmox VE volume ID (storage:content/name)", volid)
	}
	if _, exists := content[storage]; !exists {
		return missingPrerequisite("storage %q of volume %q does not exist on node %q (storages: %s)", storage, volid, node, listed(ids))
	}
	q := url.Values{}
	if kind, _, ok := strings.Cut(name, "/"); ok {
		q.Set("content", kind)
	}
	vols, err := c.preflightNames(ctx, "/nodes/"+url.PathEscape(node)+"/storage/"+url.PathEscape(storage)+"/content", "volid", q)
	if err != nil || slices.Contains(vols, volid) {
		return nil //nolint:nilerr // an unreadable listing decides nothing: PVE will
	}
	return missingPrerequisite("volume %q does not exist on node %q", volid, node)
}

func (c *Client) checkBridges(ctx context.Context, node string, bridges []string) error {
	if len(bridges) == 0 {
		return nil
	}
	q := url.Values{}
	q.Set("type", "any_bridge")
	names, err := c.preflightNames(ctx, "/nodes/"+url.PathEscape(node)+"/network", "iface", q)
	if err != nil {
		return nil //nolint:nilerr // an unreadable listing decides nothing: PVE will
	}
	var vnets []string
	for _, b := range bridges {
		if slices.Contains(names, b) {
			continue
		}
		if vnets == nil {
			if vnets, err = c.sdnVNets(ctx); err != nil {
				return err
			}
			vnets = append(vnets, "")
		}
		if !slices.Contains(vnets, b) {
			return missingPrerequisite("bridge %q does not exist on node %q (bridges: %s) nor is it an SDN VNet the connection may see (VNets: %s)",
				b, node, listed(names), listed(vnets[:len(vnets)-1]))
		}
	}
	return nil
}

// sdnVNets lists the cluster's SDN VNets, which are bridges too: those
// in its SDN configuration, applied or not, that the connection has
// SDN.Audit or SDN.Allocate on (pve-network src/PVE/API2/Network/SDN/Vnets.pm,
// index, which never refuses: it leaves out what the user may not see). A
// PVE without SDN has no VNets: pve-manager registers /cluster/sdn only when
// pve-network loads (PVE/API2/Cluster.pm, $have_sdn), and pve-http-server
// answers a path nobody registered with 501 "Method ... not implemented"
// (PVE/HTTPServer.pm, rest_handler). Any other error (403, 5xx, no answer)
// is returned: refusing the bridge as missing would blame the user's spec
// for a listing that could not be read.
func (c *Client) sdnVNets(ctx context.Context) ([]string, error) {
	vnets, err := c.preflightNames(ctx, "/cluster/sdn/vnets", "vnet", nil)
	if apiErr, ok := proxmox.AsAPIError(err); ok && apiErr.StatusCode == http.StatusNotImplemented {
		return []string{}, nil
	}
	if err != nil {
		return nil, errors.Wrap(err, "cannot list the SDN VNets to check the bridges named")
	}
	return vnets, nil
}

// preflightNames reads a listing (at most listingTTL old) and returns one
// field of each row ("" where a row lacks it).
func (c *Client) preflightNames(ctx context.Context, path, field string, q url.Values) ([]string, error) {
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	rows, err := c.listingRows(ctx, path)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.text(field))
	}
	return out, nil
}

// listingRows reads a listing through the connection's listing memo (at most
// listingTTL old, one read shared by concurrent callers). Rows carry arrays
// and objects too (a bridge's "families"), so their fields are decoded one
// by one (rawRow).
func (c *Client) listingRows(ctx context.Context, path string) ([]rawRow, error) {
	rows, err := c.listings.get(ctx, path, func(ctx context.Context) ([]map[string]json.RawMessage, error) {
		var rows []map[string]json.RawMessage
		err := c.API().Get(ctx, path, &rows)
		return rows, err
	})
	if err != nil {
		return nil, err
	}
	out := make([]rawRow, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out, nil
}

// listingTTL is how long a listing read for a create's prerequisites serves
// the next creates: a burst of creates reads the node's storages and
// bridges once, and something created in Proxmox meanwhile is seen after
// at most this long.
const listingTTL = 10 * time.Second

// listingMemo keeps the listings prerequisites are checked against, and
// the cluster's node and storage listings placements read, by path (a few
// per node: bounded).
type listingMemo struct {
	mu       sync.Mutex
	byKey    map[string]listing
	inflight map[string]*listingCall
	now      func() time.Time
}

type listing struct {
	rows []map[string]json.RawMessage
	at   time.Time
}

// listingCall is a read in flight, which concurrent callers of the same
// path wait for rather than sending their own.
type listingCall struct {
	done chan struct{}
	rows []map[string]json.RawMessage
	err  error
}

func newListingMemo() *listingMemo {
	return &listingMemo{byKey: map[string]listing{}, inflight: map[string]*listingCall{}, now: time.Now}
}

// forget drops every kept listing.
func (m *listingMemo) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.byKey)
}

// drop forgets the listing of path: after a write the client made there, the
// next read sees it.
func (m *listingMemo) drop(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byKey, path)
}

// get returns the rows of path, read by fetch unless a read younger than
// listingTTL is kept; concurrent callers share one read; failed reads are
// not kept.
func (m *listingMemo) get(ctx context.Context, path string, fetch func(context.Context) ([]map[string]json.RawMessage, error)) ([]map[string]json.RawMessage, error) {
	m.mu.Lock()
	if l, ok := m.byKey[path]; ok && m.now().Sub(l.at) < listingTTL {
		m.mu.Unlock()
		return l.rows, nil
	}
	call, joined := m.inflight[path]
	if !joined {
		call = &listingCall{done: make(chan struct{})}
		m.inflight[path] = call
	}
	m.mu.Unlock()
	if joined {
		select {
		case <-call.done:
			return call.rows, call.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// The read outlives a first caller that gives up: others may be waiting
	// on it. It stays bounded by the transport's timeouts.
	call.rows, call.err = fetch(context.WithoutCancel(ctx))
	m.mu.Lock()
	delete(m.inflight, path)
	if call.err == nil {
		m.byKey[path] = listing{rows: call.rows, at: m.now()}
	}
	m.mu.Unlock()
	close(call.done)
	return call.rows, call.err
}

func listed(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
