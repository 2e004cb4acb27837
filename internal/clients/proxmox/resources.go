package proxmox

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Resource is one guest row of GET /cluster/resources?type=vm. Decoding is
// tolerant: PVE emits 0/1 numbers for booleans and numbers where the schema
// says string (and the other way round), and fields come and go with the
// guest's state (a new guest has status "unknown" and no name for a while).
type Resource struct {
	ID       string `json:"id"`   // "qemu/100" or "lxc/101"
	Type     string `json:"type"` // "qemu" or "lxc"
	VMID     int    `json:"vmid"`
	Node     string `json:"node"`
	Name     string `json:"name"`
	Status   string `json:"status"`
	Template bool   `json:"template"`
	Lock     string `json:"lock"`
	Tags     string `json:"tags"` // PVE's ";"-separated list, see TagList
	Pool     string `json:"pool"`
	Uptime   int    `json:"uptime"` // seconds; lags like Status
}

// TagList splits Tags on PVE's separators (";", "," and spaces are all accepted).
func (r Resource) TagList() []string {
	return strings.FieldsFunc(r.Tags, func(c rune) bool { return c == ';' || c == ',' || c == ' ' })
}

// UnmarshalJSON decodes one row, accepting numbers, strings and booleans
// for every field.
func (r *Resource) UnmarshalJSON(data []byte) error {
	var w struct {
		ID       wireText `json:"id"`
		Type     wireText `json:"type"`
		VMID     wireText `json:"vmid"`
		Node     wireText `json:"node"`
		Name     wireText `json:"name"`
		Status   wireText `json:"status"`
		Template wireText `json:"template"`
		Lock     wireText `json:"lock"`
		Tags     wireText `json:"tags"`
		Pool     wireText `json:"pool"`
		// Uptime is informational: a malformed value must not hide the row.
		Uptime wireInt `json:"uptime"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	// The VMID is the row's identity: a value that is not a whole number
	// is refused rather than read as some other guest's.
	vmid, err := wholeNumber(string(w.VMID))
	if err != nil {
		return errors.Wrap(err, "vmid")
	}
	*r = Resource{
		ID:       string(w.ID),
		Type:     string(w.Type),
		VMID:     vmid,
		Node:     string(w.Node),
		Name:     string(w.Name),
		Status:   string(w.Status),
		Template: boolText(string(w.Template)),
		Lock:     string(w.Lock),
		Tags:     string(w.Tags),
		Pool:     string(w.Pool),
		Uptime:   int(w.Uptime),
	}
	return nil
}

// ClusterResources reads every guest of the cluster in one request.
func (c *Client) ClusterResources(ctx context.Context) ([]Resource, error) {
	var rs []Resource
	if err := c.api.Get(ctx, "/cluster/resources?type=vm", &rs); err != nil {
		return nil, c.redact(errors.Wrap(err, "cannot list cluster resources"))
	}
	return rs, nil
}

// resourcesMemo shares /cluster/resources reads between the managed
// resources of one connection.
type resourcesMemo struct {
	mu       sync.Mutex
	fetched  time.Time // when the cached read was sent
	rows     []Resource
	inflight *resourcesCall
	// created is when this client last asked PVE for a new guest: a read sent
	// before then may lack it (see ClusterResourcesSinceCreates).
	created time.Time
}

// guestCreated records that this client asks PVE for a new guest now.
func (m *resourcesMemo) guestCreated() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.created = time.Now()
}

// sentBeforeACreate reports whether a read sent at started may lack a guest
// this client created.
func (m *resourcesMemo) sentBeforeACreate(started time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return started.Before(m.created)
}

// sinceCreatesAttempts bounds how often ClusterResourcesSinceCreates reads
// again while creates keep coming.
const sinceCreatesAttempts = 3

type resourcesCall struct {
	started time.Time
	done    chan struct{}
	rows    []Resource
	err     error
}

// CachedClusterResources returns the guests list read at most maxAge ago,
// reading it if needed. Concurrent callers share one request. A failed read is
// not cached. Each caller gets its own copy of the slice. After Retire it
// fails with ErrClientRetired.
func (c *Client) CachedClusterResources(ctx context.Context, maxAge time.Duration) ([]Resource, error) {
	rows, _, err := c.cachedClusterResources(ctx, maxAge, false)
	return rows, err
}

// ClusterResourcesSinceCreates is CachedClusterResources for a caller that
// looks for a guest by name before creating one (adoption): it is served no
// read sent before this client last asked PVE for a new guest, which could
// lack that guest (a resource applied again right after its orphaning would
// create a second one). Joining such a read in flight, it reads again.
func (c *Client) ClusterResourcesSinceCreates(ctx context.Context, maxAge time.Duration) ([]Resource, error) {
	for attempt := 1; ; attempt++ {
		rows, started, err := c.cachedClusterResources(ctx, maxAge, true)
		if err != nil || attempt == sinceCreatesAttempts || !c.resources.sentBeforeACreate(started) {
			return rows, err
		}
	}
}

// cachedClusterResources returns the rows and when their read was sent.
func (c *Client) cachedClusterResources(ctx context.Context, maxAge time.Duration, sinceCreates bool) ([]Resource, time.Time, error) {
	// A retired client hands out nothing, not even rows it already has: its
	// caller must move to the connection's current client.
	if c.Retired() {
		return nil, time.Time{}, ErrClientRetired
	}
	call, cached, fetched := c.resourcesCallFor(ctx, maxAge, sinceCreates)
	if cached != nil {
		return slices.Clone(cached), fetched, nil
	}
	select {
	case <-call.done:
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
	if call.err != nil {
		return nil, time.Time{}, call.err
	}
	return slices.Clone(call.rows), call.started, nil
}

// resourcesCallFor returns either fresh cached rows (and when their read was
// sent), or the read to wait for (joining the one in flight, or starting one).
// With sinceCreates, cached rows read before this client's last create are
// not fresh.
func (c *Client) resourcesCallFor(ctx context.Context, maxAge time.Duration, sinceCreates bool) (*resourcesCall, []Resource, time.Time) {
	m := c.resources
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rows != nil && time.Since(m.fetched) <= maxAge && (!sinceCreates || !m.fetched.Before(m.created)) {
		return nil, m.rows, m.fetched
	}
	if m.inflight != nil {
		return m.inflight, nil, time.Time{}
	}
	call := &resourcesCall{started: time.Now(), done: make(chan struct{})}
	m.inflight = call
	// The read outlives a caller that gives up: others may be waiting on it.
	// It stays bounded by the transport's timeouts.
	go c.runResourcesCall(context.WithoutCancel(ctx), call)
	return call, nil, time.Time{}
}

func (c *Client) runResourcesCall(ctx context.Context, call *resourcesCall) {
	rows, err := c.ClusterResources(ctx)
	if rows == nil && err == nil {
		rows = []Resource{}
	}
	m := c.resources
	m.mu.Lock()
	call.rows, call.err = rows, err
	m.inflight = nil
	if err == nil {
		m.rows, m.fetched = rows, call.started
	}
	m.mu.Unlock()
	close(call.done)
}
