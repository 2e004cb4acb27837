package pvesim

import (
	"crypto/sha1" //nolint:gosec // PVE's config digests are SHA-1; nothing is protected by it
	"encoding/hex"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// HA resources as pve-ha-manager serves them (src/PVE/API2/HA/Resources.pm over
// src/PVE/HA/Config.pm and /etc/pve/ha/resources.cfg). A guest is an HA resource while
// g.HAManaged; g.HA holds the options its section sets (only those given: the API reads the
// raw file, defaults are filled in by the CRM, not by GET). Groups are not modelled: PVE 9
// migrated them to rules, so `group` is refused as pve-ha-manager does after the migration.

// haOptionKeys are the section options of a vm:/ct: resource (PVE::HA::Resources defaultData
// and the PVEVM/PVECT plugins), in the order resources.cfg writes them.
var haOptionKeys = []string{"state", "failback", "max_restart", "max_relocate", "comment"}

// reSID is parse_sid's "<type>:<name>" form; a bare number is a VMID.
var (
	reSID     = regexp.MustCompile(`^(\S+):(\S+)$`)
	reSIDVMID = regexp.MustCompile(`^(\d+)$`)
)

// haType is PVE::HA::Tools::get_ha_resource_type: qemu guests are "vm", containers "ct".
func haType(g *guest) string {
	if g.Kind == KindLXC {
		return "ct"
	}
	return "vm"
}

// parseSID is PVE::HA::Config::parse_sid: a bare VMID takes its type from the guest list.
func (s *Server) parseSID(sid string) (full, typ, name string, err error) {
	if m := reSIDVMID.FindStringSubmatch(sid); m != nil {
		vmid, _ := strconv.Atoi(m[1])
		g, ok := s.st.guests[vmid]
		if !ok {
			return "", "", "", errInternal("unable to detect SID from VMID - VM/CT %s does not exist", m[1])
		}
		return haType(g) + ":" + m[1], haType(g), m[1], nil
	}
	if m := reSID.FindStringSubmatch(sid); m != nil {
		return sid, m[1], m[2], nil
	}
	return "", "", "", errInternal("unable to parse service id '%s'", sid)
}

// haGuest is the plugin's exists() (PVE/HA/Resources/PVEVM.pm, PVECT.pm): the guest behind a
// sid, of the plugin's type.
func (s *Server) haGuest(typ, name string) (*guest, error) {
	if typ != "vm" && typ != "ct" {
		return nil, errInternal("unknown resource type '%s'", typ)
	}
	vmid, err := strconv.Atoi(name)
	g, ok := s.st.guests[vmid]
	if err != nil || !ok {
		return nil, errInternal("resource '%s:%s' does not exist in cluster", typ, name)
	}
	if haType(g) != typ {
		what := map[string]string{"vm": "VM", "ct": "CT"}[typ]
		return nil, errInternal("resource '%s:%s' - guest with ID %s is not a %s", typ, name, name, what)
	}
	return g, nil
}

// haResourceRow is api_copy_config: the section's options plus sid, type and the file's
// digest, the same on every row of one read.
func haResourceRow(g *guest, digest string) map[string]any {
	row := map[string]any{"sid": haType(g) + ":" + strconv.Itoa(g.VMID), "type": haType(g), "digest": digest}
	for k, v := range g.HA {
		row[k] = v
		if k != "state" && k != "comment" {
			row[k], _ = strconv.Atoi(v)
		}
	}
	return row
}

// haGuests are the HA-managed guests, by sid as resources.cfg sorts them.
func (st *state) haGuests() []*guest {
	var out []*guest
	for _, g := range st.guests {
		if g.HAManaged {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return haType(out[i])+strconv.Itoa(out[i].VMID) < haType(out[j])+strconv.Itoa(out[j].VMID)
	})
	return out
}

// haDigest is the SHA-1 of resources.cfg as the HA-managed guests would write it.
func (st *state) haDigest() string {
	h := sha1.New() //nolint:gosec // see the import
	for _, g := range st.haGuests() {
		_, _ = h.Write([]byte(haType(g) + ": " + strconv.Itoa(g.VMID) + "\n"))
		for _, k := range haOptionKeys {
			if v, ok := g.HA[k]; ok {
				_, _ = h.Write([]byte("\t" + k + " " + v + "\n"))
			}
		}
		_, _ = h.Write([]byte("\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// handleHAResourceIndex is Resources.pm index: every resource, filtered by type.
func handleHAResourceIndex(s *Server, r *request) (any, error) {
	out := []map[string]any{}
	digest := s.st.haDigest()
	for _, g := range s.st.haGuests() {
		if t := r.str("type"); t != "" && t != haType(g) {
			continue
		}
		out = append(out, haResourceRow(g, digest))
	}
	return out, nil
}

// handleHAResourceRead is Resources.pm read: "no such resource" for a sid not configured.
func handleHAResourceRead(s *Server, r *request) (any, error) {
	sid, typ, name, err := s.parseSID(r.str("sid"))
	if err != nil {
		return nil, err
	}
	g, err := s.haGuest(typ, name)
	if err != nil || !g.HAManaged {
		return nil, errInternal("no such resource '%s'", sid)
	}
	return haResourceRow(g, s.st.haDigest()), nil
}

// handleHAResourceCreate is Resources.pm create: parse the sid, check the type parameter
// against it, refuse group, check the guest exists, refuse a sid already defined.
func handleHAResourceCreate(s *Server, r *request) (any, error) {
	sid, typ, name, err := s.parseSID(r.str("sid"))
	if err != nil {
		return nil, err
	}
	if t := r.str("type"); t != "" && t != typ {
		return nil, errInternal("types does not match")
	}
	if r.has("group") {
		return nil, errInternal("invalid parameter 'group': ha groups have been migrated to rules")
	}
	g, err := s.haGuest(typ, name)
	if err != nil {
		return nil, err
	}
	if g.HAManaged {
		return nil, errInternal("create resource failed: resource ID '%s' already defined", sid)
	}
	g.HAManaged = true
	setHAOptions(g, r)
	return nil, nil
}

// handleHAResourceUpdate is Resources.pm update over Config.pm update_resources_config: the
// digest must match the file's, the resource must exist, given options are set and those
// named in `delete` removed (each must be an option of the type).
func handleHAResourceUpdate(s *Server, r *request) (any, error) {
	sid, typ, name, err := s.parseSID(r.str("sid"))
	if err != nil {
		return nil, err
	}
	if t := r.str("type"); t != "" && t != typ {
		return nil, errInternal("types does not match")
	}
	if r.has("group") {
		return nil, errInternal("invalid parameter 'group': ha groups have been migrated to rules")
	}
	if d := r.str("digest"); d != "" && d != s.st.haDigest() {
		// PVE::SectionConfig::assert_if_modified, under lock_ha_domain's prefix.
		return nil, errInternal("update resources config failed: detected modified configuration - file changed by other user? Try again.")
	}
	g, err := s.haGuest(typ, name)
	if err != nil || !g.HAManaged {
		return nil, errInternal("update resources config failed: no such resource '%s'", sid)
	}
	var dels []string
	for _, k := range strings.FieldsFunc(r.str("delete"), func(c rune) bool { return c == ',' || c == ';' || c == ' ' }) {
		if !isHAOption(k) {
			return nil, errInternal("update resources config failed: no such option '%s'", k)
		}
		dels = append(dels, k)
	}
	setHAOptions(g, r)
	for _, k := range dels {
		delete(g.HA, k)
	}
	return nil, nil
}

// handleHAResourceDelete is Resources.pm delete: a sid that is not configured is refused.
func handleHAResourceDelete(s *Server, r *request) (any, error) {
	sid, typ, name, err := s.parseSID(r.str("sid"))
	if err != nil {
		return nil, err
	}
	g, gerr := s.haGuest(typ, name)
	if gerr != nil || !g.HAManaged {
		return nil, errInternal("cannot delete service '%s', not HA managed!", sid)
	}
	g.HAManaged, g.HA = false, nil
	return nil, nil
}

// setHAOptions stores the options a create or update gives.
func setHAOptions(g *guest, r *request) {
	if g.HA == nil {
		g.HA = map[string]string{}
	}
	for _, k := range haOptionKeys {
		if r.has(k) {
			g.HA[k] = r.str(k)
		}
	}
}

func isHAOption(k string) bool {
	return slices.Contains(haOptionKeys, k)
}

// haState is the state the CRM works with (read_and_check_resources_config): unset and the
// old alias "enabled" are "started".
func haState(g *guest) string {
	if st := g.HA["state"]; st != "" && st != "enabled" {
		return st
	}
	return "started"
}

// HAResource returns a copy of the options of a guest's HA resource; ok is false when the
// guest is not one.
func (s *Server) HAResource(vmid int) (opts map[string]string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, found := s.st.guests[vmid]
	if !found || !g.HAManaged {
		return nil, false
	}
	return copyMap(g.HA), true
}

// SetHAOption sets one option of a guest's HA resource as an admin's `ha-manager set` would,
// for tests of drift; it reports whether the guest is an HA resource.
func (s *Server) SetHAOption(vmid int, key, value string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, found := s.st.guests[vmid]
	if !found || !g.HAManaged || !isHAOption(key) {
		return false
	}
	if g.HA == nil {
		g.HA = map[string]string{}
	}
	g.HA[key] = value
	return true
}
