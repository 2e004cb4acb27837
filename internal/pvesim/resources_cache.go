package pvesim

import (
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// resourcesCache holds encoded /cluster/resources answers by type filter. PVE itself
// serves this listing from pvestatd's periodic snapshot, so a copy is faithful as long as
// it is dropped whenever the state changes (gen), a lagged view comes due, or an uptime
// the listing shows ticks to its next second. It is guarded by Server.mu.
type resourcesCache struct {
	gen    uint64
	until  time.Time
	byType map[string]*encodedData
	// bufs recycles listing buffers once no request writes them any more.
	bufs sync.Pool
	// sizes remembers each listing's last length, so a rebuild allocates once.
	sizes map[string]int
	// ids and order are the guest VMIDs and guests in VMID order; nil after a guest was
	// added or removed.
	ids   []int
	order []*guest
	// limitsEpoch moves on after every task step: a worker may change any guest's config
	// (a clone its target, say), so every guest's cached maxima are recomputed then.
	limitsEpoch uint64
}

// encodedData is a "data" value already encoded as JSON, which writeData copies verbatim.
// The cache and every request writing it hold a reference; the last one to let go
// returns the buffer to the pool, so a rebuilt listing does not allocate anew.
type encodedData struct {
	buf  []byte
	refs atomic.Int32
	pool *sync.Pool
}

func (d *encodedData) acquire() *encodedData {
	d.refs.Add(1)
	return d
}

func (d *encodedData) release() {
	if d.refs.Add(-1) == 0 && d.pool != nil {
		buf := d.buf[:0]
		d.buf = nil
		d.pool.Put(&buf)
	}
}

// releaseData lets go of a handler's result when it is shared encoded data.
func releaseData(data any) {
	if d, ok := data.(*encodedData); ok {
		d.release()
	}
}

// guestLimits are the maxcpu/maxmem/maxdisk a guest's config implies.
type guestLimits struct {
	cpus    int
	mem     int64
	disk    int64
	epoch   uint64
	current bool
}

// encodedRow is a guest's last encoded /cluster/resources row and the entry it encodes.
type encodedRow struct {
	entry guestEntry
	json  []byte
}

// farFuture stands for "no timed expiry".
var farFuture = time.Unix(math.MaxInt32, 0)

// guestIDs lists the VMIDs in order, sorting only after the set of guests changed.
func (s *Server) guestIDs() []int {
	if s.res.ids == nil {
		s.res.ids = sortedInts(s.st.guests)
	}
	return s.res.ids
}

// orderedGuests lists the guests in VMID order, like guestIDs.
func (s *Server) orderedGuests() []*guest {
	if s.res.order == nil {
		ids := s.guestIDs()
		s.res.order = make([]*guest, len(ids))
		for i, id := range ids {
			s.res.order[i] = s.st.guests[id]
		}
	}
	return s.res.order
}

// guestSetChanged drops the ordered lists.
func (s *Server) guestSetChanged() { s.res.ids, s.res.order = nil, nil }

// limits returns the guest's config-derived maxima, computed again only after a request
// or task step that may have changed its config (epoch is resourcesCache.limitsEpoch).
func (g *guest) limits(epoch uint64) guestLimits {
	if !g.lim.current || g.lim.epoch != epoch {
		g.lim = guestLimits{cpus: guestCPUs(g), mem: guestMaxMem(g), disk: guestMaxDisk(g), epoch: epoch, current: true}
	}
	return g.lim
}

// configChanged marks a guest's derived values stale after its config may have changed.
func (s *Server) configChanged(vmid int) {
	if g, ok := s.st.guests[vmid]; ok {
		g.lim.current = false
	}
}

// configChangedByID is configChanged for a task or parameter id that may name a guest.
func (s *Server) configChangedByID(id string) {
	if vmid, err := strconv.Atoi(id); err == nil {
		s.configChanged(vmid)
	}
}

// cachedResources returns the encoded listing for a type filter, rebuilding it when stale.
// The caller owns one reference and must release it once the answer is written.
func (s *Server) cachedResources(typ string, now time.Time) *encodedData {
	c := &s.res
	if gen := s.gen.Load(); c.gen != gen || !now.Before(c.until) || c.byType == nil {
		for _, d := range c.byType {
			d.release()
		}
		c.gen, c.until, c.byType = gen, farFuture, map[string]*encodedData{}
	}
	if d, ok := c.byType[typ]; ok {
		return d.acquire()
	}
	if c.sizes == nil {
		c.sizes = map[string]int{}
	}
	buf := c.buffer(c.sizes[typ] + c.sizes[typ]/8 + 1024)
	d := &encodedData{buf: s.encodeResources(buf, typ, now), pool: &c.bufs}
	d.refs.Store(1)
	c.byType[typ], c.sizes[typ] = d, len(d.buf)
	return d.acquire()
}

// buffer takes a recycled buffer, or a new one of about the size wanted.
func (c *resourcesCache) buffer(size int) []byte {
	if p, ok := c.bufs.Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, size)
}

// encodeResources builds the listing as JSON: guests, nodes, storages, pools.
func (s *Server) encodeResources(buf []byte, typ string, now time.Time) []byte {
	buf = append(buf, '[')
	add := func(row []byte) {
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, row...)
	}
	if typ == "" || typ == "vm" {
		for _, g := range s.orderedGuests() {
			add(s.guestRow(g, now))
		}
	}
	if typ == "" || typ == "node" {
		for _, n := range s.st.nodes {
			e := nodeResource(n, s.memory.get(n))
			if s.nodeOffline(n) {
				e = offlineResource(e)
			}
			add(mustJSON(e))
		}
	}
	if typ == "" || typ == "storage" {
		for _, n := range s.st.nodes {
			for _, id := range s.st.storageIDs(n) {
				add(mustJSON(storageResource(n, s.st.storages[n][id])))
			}
		}
	}
	if typ == "" {
		for _, id := range sortedKeys(s.st.pools) {
			add(mustJSON(poolResourceEntry{ID: "pool/" + id, Type: "pool", Pool: id}))
		}
	}
	return append(buf, ']')
}

// guestRow is the guest's encoded row, re-encoded only when the row changed. It shortens
// the cache's life to the guest's next lagged view and next uptime second.
func (s *Server) guestRow(g *guest, now time.Time) []byte {
	e := guestResource(g, now, s.res.limitsEpoch)
	if s.nodeOffline(g.Node) {
		e = unreachableGuest(e)
	}
	if len(g.rrd.queue) > 0 {
		s.res.until = minTime(s.res.until, g.rrd.queue[0].at)
	}
	if v := g.rrd.cur; showsUptime(v) {
		s.res.until = minTime(s.res.until, v.StartedAt.Add(time.Duration(e.Uptime+1)*time.Second))
	}
	if g.row.json == nil || g.row.entry != e {
		g.row = encodedRow{entry: e, json: mustJSON(e)}
	}
	return g.row.json
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// mustJSON encodes values whose types cannot fail to encode (plain structs of scalars).
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}
