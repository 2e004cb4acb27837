package pvesim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Resource pools as pve-access-control serves them. Guest membership lives on the guest
// (guest.Pool) so /cluster/resources shows it live; storage membership on the pool.

const rePoolID = `[A-Za-z0-9\.\-_]+(/[A-Za-z0-9\.\-_]+){0,2}`

func pPoolID() ParamSpec { return pString("poolid").req().pattern(rePoolID) }

// pPoolType filters a pool's members by type.
func pPoolType() ParamSpec { return pEnum("type", "qemu", "lxc", "storage") }

func poolUpdateParams() []ParamSpec {
	return []ParamSpec{pPoolID(), pBool("allow-move"), pString("comment"), pBool("delete"), pString("storage"), pString("vms")}
}

func errNoPool(id string) *apiError { return errInternal("pool '%s' does not exist", id) }

// poolCheckParam fails like rpcenv->check_pool_exist when a create or clone names an unknown pool.
func (s *Server) poolCheckParam(r *request) error {
	if !r.has("pool") {
		return nil
	}
	if _, ok := s.st.pools[r.str("pool")]; !ok {
		return errNoPool(r.str("pool"))
	}
	return nil
}

// poolSetGuest makes a guest a member of a pool (add_vm_to_pool); "" removes it.
func (s *Server) poolSetGuest(g *guest, id string) {
	g.Pool = id
	s.markDirty()
}

func handlePoolIndex(s *Server, r *request) (any, error) {
	if !r.has("poolid") {
		out := make([]map[string]any, 0, len(s.st.pools))
		for _, id := range sortedKeys(s.st.pools) {
			out = append(out, poolEntry(s.st.pools[id]))
		}
		return out, nil
	}
	p, ok := s.st.pools[r.str("poolid")]
	if !ok {
		return nil, errNoPool(r.str("poolid"))
	}
	e := poolEntry(p)
	e["members"] = s.poolMembers(p, r.str("type"))
	return []map[string]any{e}, nil
}

func handlePoolReadDeprecated(s *Server, r *request) (any, error) {
	p, ok := s.st.pools[r.str("poolid")]
	if !ok {
		return nil, errNoPool(r.str("poolid"))
	}
	e := map[string]any{"members": s.poolMembers(p, r.str("type"))}
	if p.Comment != "" {
		e["comment"] = p.Comment
	}
	return e, nil
}

func poolEntry(p *pool) map[string]any {
	e := map[string]any{"poolid": p.ID}
	if p.Comment != "" {
		e["comment"] = p.Comment
	}
	return e
}

// poolMembers lists guests and storages as /cluster/resources entries.
func (s *Server) poolMembers(p *pool, typ string) []any {
	out := []any{}
	now := time.Now()
	for _, id := range s.guestIDs() {
		g := s.st.guests[id]
		if g.Pool == p.ID && (typ == "" || typ == g.Kind) {
			out = append(out, guestResource(g, now, s.res.limitsEpoch))
		}
	}
	if typ != "" && typ != "storage" {
		return out
	}
	for _, stID := range p.Storage {
		for _, n := range s.st.nodes {
			if st, ok := s.st.storage(n, stID); ok {
				out = append(out, storageResource(n, st))
			}
		}
	}
	return out
}

func handlePoolCreate(s *Server, r *request) (any, error) {
	id := r.str("poolid")
	if _, ok := s.st.pools[id]; ok {
		return nil, errInternal("create pool failed: pool '%s' already exists", id)
	}
	if i := strings.LastIndex(id, "/"); i > 0 {
		if _, ok := s.st.pools[id[:i]]; !ok {
			return nil, errInternal("create pool failed: parent '%s' does not exist", id[:i])
		}
	}
	s.st.pools[id] = &pool{ID: id, Comment: r.str("comment")}
	return nil, nil
}

func handlePoolUpdate(s *Server, r *request) (any, error) {
	p, ok := s.st.pools[r.str("poolid")]
	if !ok {
		return nil, errNoPool(r.str("poolid"))
	}
	if err := s.checkPoolUpdate(p, r); err != nil {
		return nil, errInternal("update pools failed: %s", err.Error())
	}
	if r.has("comment") {
		p.Comment = r.str("comment")
	}
	for _, vmid := range splitPVEList(r.str("vms")) {
		g := s.st.guests[atoiDefault(vmid, 0)]
		if r.bool("delete") {
			s.poolSetGuest(g, "")
		} else {
			s.poolSetGuest(g, p.ID)
		}
	}
	for _, stID := range splitPVEList(r.str("storage")) {
		if r.bool("delete") {
			p.Storage = removeString(p.Storage, stID)
		} else {
			p.Storage = append(p.Storage, stID)
		}
	}
	return nil, nil
}

// checkPoolUpdate validates every listed member first so a failed update changes nothing.
func (s *Server) checkPoolUpdate(p *pool, r *request) error {
	del := r.bool("delete")
	for _, v := range splitPVEList(r.str("vms")) {
		vmid, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("invalid VMID '%s'", v)
		}
		g, ok := s.st.guests[vmid]
		switch {
		case !ok:
			return fmt.Errorf("VM %d does not exist", vmid)
		case del && g.Pool != p.ID:
			return fmt.Errorf("VM %d is not a pool member", vmid)
		case !del && g.Pool == p.ID:
			return fmt.Errorf("VM %d is already a pool member", vmid)
		case !del && g.Pool != "" && !r.bool("allow-move"):
			return fmt.Errorf("VM %d belongs already to pool '%s' and 'allow-move' is not set", vmid, g.Pool)
		}
	}
	for _, stID := range splitPVEList(r.str("storage")) {
		member := contains(p.Storage, stID)
		switch {
		case !s.storageDefined(stID):
			return fmt.Errorf("storage '%s' does not exist", stID)
		case del && !member:
			return fmt.Errorf("Storage '%s' is not a pool member", stID)
		case !del && member:
			return fmt.Errorf("Storage '%s' is already a pool member", stID)
		}
	}
	return nil
}

func (s *Server) storageDefined(id string) bool {
	for _, n := range s.st.nodes {
		if _, ok := s.st.storage(n, id); ok {
			return true
		}
	}
	return false
}

func handlePoolDelete(s *Server, r *request) (any, error) {
	id := r.str("poolid")
	p, ok := s.st.pools[id]
	if !ok {
		return nil, errNoPool(id)
	}
	for _, vmid := range s.guestIDs() {
		if s.st.guests[vmid].Pool == id {
			return nil, errInternal("delete pool failed: pool '%s' is not empty (contains VM %d)", id, vmid)
		}
	}
	if len(p.Storage) > 0 {
		return nil, errInternal("delete pool failed: pool '%s' is not empty (contains storage '%s')", id, p.Storage[0])
	}
	for _, other := range sortedKeys(s.st.pools) {
		if strings.HasPrefix(other, id+"/") {
			return nil, errInternal("delete pool failed: pool '%s' is not empty (contains child pool '%s')", id, other)
		}
	}
	delete(s.st.pools, id)
	return nil, nil
}

// splitPVEList splits PVE's list formats (comma, semicolon, space or NUL separated).
func splitPVEList(v string) []string {
	return strings.FieldsFunc(v, func(c rune) bool { return c == ',' || c == ';' || c == ' ' || c == '\x00' })
}

func removeString(list []string, v string) []string {
	out := list[:0:0]
	for _, s := range list {
		if s != v {
			out = append(out, s)
		}
	}
	return out
}
