package pvesim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// persistedState is the JSON form of the cluster for --state and for the reset baseline.
type persistedState struct {
	Guests  []persistedGuest  `json:"guests"`
	Volumes []persistedVolume `json:"volumes"`
	Pools   []pool            `json:"pools,omitempty"`
	Users   map[string]string `json:"users,omitempty"`
	Tokens  map[string]string `json:"tokens,omitempty"`
}

type persistedGuest struct {
	Kind          string            `json:"kind"`
	Node          string            `json:"node"`
	VMID          int               `json:"vmid"`
	Config        map[string]string `json:"config"`
	Pending       map[string]string `json:"pending,omitempty"`
	PendingDelete []string          `json:"pendingDelete,omitempty"`
	Snapshots     []snapshot        `json:"snapshots,omitempty"`
	Status        string            `json:"status"`
	StartedAt     time.Time         `json:"startedAt,omitzero"`
	CIApplied     map[string]string `json:"ciApplied,omitempty"`
	Pool          string            `json:"pool,omitempty"`
	HAManaged     bool              `json:"haManaged,omitempty"`
	HA            map[string]string `json:"ha,omitempty"`
}

type persistedVolume struct {
	Node    string `json:"node"`
	Storage string `json:"storage"`
	volume
}

// snapshotState captures guests, volumes and pools (and, with identities, users and tokens).
func (s *Server) snapshotState(identities bool) *persistedState {
	ps := &persistedState{}
	for _, id := range sortedInts(s.st.guests) {
		g := s.st.guests[id]
		pg := persistedGuest{Kind: g.Kind, Node: g.Node, VMID: g.VMID, Config: copyMap(g.Config), Pending: copyMap(g.Pending),
			PendingDelete: sortedKeys(g.PendingDelete), Status: g.Status, StartedAt: g.StartedAt, CIApplied: copyMap(g.CIApplied),
			Pool: g.Pool, HAManaged: g.HAManaged, HA: copyMap(g.HA)}
		for _, sn := range g.Snapshots {
			c := *sn
			c.Config = copyMap(sn.Config)
			pg.Snapshots = append(pg.Snapshots, c)
		}
		ps.Guests = append(ps.Guests, pg)
	}
	seen := map[*storage]bool{}
	for _, n := range s.st.nodes {
		for _, id := range s.st.storageIDs(n) {
			st := s.st.storages[n][id]
			if seen[st] {
				continue
			}
			seen[st] = true
			for _, volid := range sortedKeys(st.Volumes) {
				ps.Volumes = append(ps.Volumes, persistedVolume{Node: n, Storage: id, volume: *st.Volumes[volid]})
			}
		}
	}
	for _, id := range sortedKeys(s.st.pools) {
		ps.Pools = append(ps.Pools, *s.st.pools[id])
	}
	if identities {
		s.auth.mu.RLock()
		ps.Users, ps.Tokens = copyMap(s.auth.users), copyMap(s.auth.tokens)
		s.auth.mu.RUnlock()
	}
	return ps
}

// restoreState replaces guests, volumes and pools (and identities when present).
func (s *Server) restoreState(ps *persistedState) {
	for _, stMap := range s.st.storages {
		for _, st := range stMap {
			st.Volumes, st.names = map[string]*volume{}, map[string]int{}
		}
	}
	s.st.guests = map[int]*guest{}
	s.guestSetChanged()
	s.st.pools = map[string]*pool{}
	for _, pv := range ps.Volumes {
		if st, ok := s.st.storage(pv.Node, pv.Storage); ok {
			v := pv.volume
			st.addVolume(&v)
		}
	}
	for _, pg := range ps.Guests {
		if !s.st.nodeSet[pg.Node] {
			continue
		}
		g := newGuest(pg.Kind, pg.Node, pg.VMID)
		g.Config, g.Status, g.StartedAt, g.Pool, g.HAManaged, g.HA = copyMap(pg.Config), pg.Status, pg.StartedAt, pg.Pool, pg.HAManaged, copyMap(pg.HA)
		g.Pending = copyMap(pg.Pending)
		g.CIApplied = copyMap(pg.CIApplied)
		for _, k := range pg.PendingDelete {
			g.PendingDelete[k] = true
		}
		for i := range pg.Snapshots {
			sn := pg.Snapshots[i]
			sn.Config = copyMap(sn.Config)
			g.Snapshots = append(g.Snapshots, &sn)
		}
		g.rrd.cur = g.liveView()
		s.st.guests[g.VMID] = g
	}
	for i := range ps.Pools {
		p := ps.Pools[i]
		s.st.pools[p.ID] = &p
	}
	if ps.Users != nil || ps.Tokens != nil {
		s.auth.mu.Lock()
		s.auth.users, s.auth.tokens = copyMap(ps.Users), copyMap(ps.Tokens)
		s.auth.mu.Unlock()
	}
}

func (s *Server) loadState(path string) error {
	b, err := os.ReadFile(path) //nolint:gosec // the path is the operator's --state flag
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return errors.Wrap(err, "cannot read state file")
	}
	ps := &persistedState{}
	if err := json.Unmarshal(b, ps); err != nil {
		return errors.Wrap(err, "cannot parse state file")
	}
	s.mu.Lock()
	s.restoreState(ps)
	s.mu.Unlock()
	return nil
}

func (s *Server) saveState(path string) error {
	s.mu.Lock()
	ps := s.snapshotState(true)
	s.mu.Unlock()
	b, err := json.MarshalIndent(ps, "", "  ")
	if err != nil {
		return errors.Wrap(err, "cannot encode state")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pvesim-state-*")
	if err != nil {
		return errors.Wrap(err, "cannot create temporary state file")
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return errors.Wrap(err, "cannot write state file")
	}
	if err := tmp.Close(); err != nil {
		return errors.Wrap(err, "cannot close state file")
	}
	return errors.Wrap(os.Rename(tmp.Name(), path), "cannot replace state file")
}

// startPersister rewrites the state file shortly after changes, and once more on Close.
func (s *Server) startPersister(path string) {
	s.persistWG.Add(1)
	go func() {
		defer s.persistWG.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				if s.dirty.Swap(false) {
					_ = s.saveState(path)
				}
			case <-s.stopCh:
				if s.dirty.Swap(false) {
					_ = s.saveState(path)
				}
				return
			}
		}
	}()
}

// SaveBaseline makes the current guests, volumes and pools what Reset restores.
func (s *Server) SaveBaseline() {
	s.mu.Lock()
	s.st.baseline = s.snapshotState(false)
	s.mu.Unlock()
}

// Reset restores the baseline (empty unless SaveBaseline was called), drops all tasks,
// clears faults and zeroes the counters. Users and tokens are kept.
func (s *Server) Reset() {
	s.mu.Lock()
	s.st.stopTimers()
	baseline := s.st.baseline
	if baseline == nil {
		baseline = &persistedState{}
	}
	s.restoreState(baseline)
	s.st.tasks = map[string]*task{}
	s.st.taskLog = map[string][]*task{}
	s.st.dropFileLocks()
	s.mu.Unlock()
	s.faults.clear()
	s.counters.reset()
	s.markDirty()
}
