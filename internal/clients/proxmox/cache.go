package proxmox

import (
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/metrics"
)

// ErrNotReady means the cache holds no client for a connection (yet).
var ErrNotReady = errors.New("proxmox connection is not ready")

// subscriberBuffer is deep enough for a burst of rotations; see notify.
const subscriberBuffer = 1024

// Cache holds the current client of each connection. One per provider
// process, passed explicitly. Safe for concurrent use.
type Cache struct {
	mu          sync.Mutex
	entries     map[string]cacheEntry
	subscribers []chan event.GenericEvent
	metrics     *metrics.Proxmox
	fence       func() error
}

type cacheEntry struct {
	client      *Client
	fingerprint string
	// failure says why there is no client (Fail); "" otherwise.
	failure string
}

// A CacheOption configures a Cache.
type CacheOption func(*Cache)

// WithMetrics makes the cache count client rebuilds in m, and hands m to
// whoever builds and verifies the clients it holds (Metrics).
func WithMetrics(m *metrics.Proxmox) CacheOption {
	return func(c *Cache) { c.metrics = m }
}

// WithFence makes every client built for the cache ask fence before each
// request (Config.Fence).
func WithFence(fence func() error) CacheOption {
	return func(c *Cache) { c.fence = fence }
}

// NewCache returns an empty cache.
func NewCache(o ...CacheOption) *Cache {
	c := &Cache{entries: map[string]cacheEntry{}}
	for _, fn := range o {
		fn(c)
	}
	return c
}

// Metrics returns where the connections' clients report and their
// readiness is recorded; nil when the provider measures nothing.
func (c *Cache) Metrics() *metrics.Proxmox { return c.metrics }

// Fence is what the clients built for this cache must ask before each
// request; nil when nothing gates them.
func (c *Cache) Fence() func() error { return c.fence }

// Store makes cl the client of connection. The previous client, if another
// one, is retired so no new request uses the credential it was built from.
// Subscribers hear of the connection when the fingerprint changed (including
// a first Store); replacing a client built from another fingerprint counts
// as a rebuild.
func (c *Cache) Store(connection, fingerprint string, cl *Client) {
	c.mu.Lock()
	old, had := c.entries[connection]
	c.entries[connection] = cacheEntry{client: cl, fingerprint: fingerprint}
	// A client after none (first Store, or after Fail) or from another
	// fingerprint is news to subscribers; replacing a client is a rebuild.
	if !had || old.client == nil || old.fingerprint != fingerprint {
		c.notifyLocked(connection)
	}
	if had && old.client != nil && old.fingerprint != fingerprint {
		c.metrics.CountClientRebuild(connection)
	}
	c.mu.Unlock()
	if had && old.client != nil && old.client != cl {
		old.client.Retire()
	}
}

// Remove retires and forgets the client of connection, and tells subscribers.
func (c *Cache) Remove(connection string) {
	c.mu.Lock()
	old, had := c.entries[connection]
	delete(c.entries, connection)
	if had {
		c.notifyLocked(connection)
	}
	c.mu.Unlock()
	if had && old.client != nil {
		old.client.Retire()
	}
}

// Fail retires the client of connection like Remove, and remembers why the
// connection has none: Get's error then says so, and the resources using
// the connection report the connection's own failure. reason must hold no
// credential. Subscribers hear of it when the reason changed.
func (c *Cache) Fail(connection, reason string) {
	c.mu.Lock()
	old, had := c.entries[connection]
	c.entries[connection] = cacheEntry{failure: reason}
	if !had || old.client != nil || old.failure != reason {
		c.notifyLocked(connection)
	}
	c.mu.Unlock()
	if had && old.client != nil {
		old.client.Retire()
	}
}

// Get returns the current client of connection, or an error wrapping
// ErrNotReady that carries the connection's failure when Fail recorded one.
func (c *Cache) Get(connection string) (*Client, error) {
	c.mu.Lock()
	e, ok := c.entries[connection]
	c.mu.Unlock()
	switch {
	case ok && e.client != nil:
		return e.client, nil
	case ok && e.failure != "":
		return nil, errors.Wrapf(ErrNotReady, "connection %q: %s", connection, e.failure)
	default:
		return nil, errors.Wrapf(ErrNotReady, "connection %q", connection)
	}
}

// Fingerprint returns what the current client of connection was built from,
// or "" when there is none.
func (c *Cache) Fingerprint(connection string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[connection].fingerprint
}

// Subscribe returns a channel that receives a *v1alpha1.ProxmoxConnection with
// only its name (and type meta) set each time a connection's client is replaced or removed. Meant for
// source.Channel in the managed-resource controllers; read it continuously.
func (c *Cache) Subscribe() <-chan event.GenericEvent {
	ch := make(chan event.GenericEvent, subscriberBuffer)
	c.mu.Lock()
	c.subscribers = append(c.subscribers, ch)
	c.mu.Unlock()
	return ch
}

// notifyLocked never blocks the connection reconciler: a subscriber whose
// buffer is full misses the event and finds the new client on its next poll.
func (c *Cache) notifyLocked(connection string) {
	for _, ch := range c.subscribers {
		obj := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: connection}}
		obj.SetGroupVersionKind(v1alpha1.ProxmoxConnectionGroupVersionKind)
		select {
		case ch <- event.GenericEvent{Object: obj}:
		default:
		}
	}
}
