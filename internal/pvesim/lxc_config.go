package pvesim

import (
	"fmt"
	"strconv"
	"strings"
)

// Container configuration: pve-container's src/PVE/API2/LXC/Config.pm and
// update_pct_config (src/PVE/LXC/Config.pm).

func handleLXCConfigGet(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if r.has("snapshot") {
		sn := g.findSnapshot(r.str("snapshot"))
		if sn == nil {
			return nil, errInternal("snapshot '%s' does not exist", r.str("snapshot"))
		}
		return lxcConfigData(sn.Config, g.digest()), nil
	}
	cfg := g.effectiveConfig()
	if r.bool("current") {
		cfg = g.Config
	}
	return lxcConfigData(cfg, g.digest()), nil
}

// lxcConfigData types a container config as PVE's JSON encoder writes it: integer and
// boolean keys as numbers, raw lxc.* keys as [key, value] pairs, everything else a string.
func lxcConfigData(cfg map[string]string, digest string) map[string]any {
	out := make(map[string]any, len(cfg)+1)
	var raw [][]string
	for _, k := range sortedKeys(cfg) {
		v := cfg[k]
		if strings.HasPrefix(k, "lxc.") {
			raw = append(raw, []string{k, v})
			continue
		}
		out[k] = lxcTypedValue(lxcParamTypes.lookup(k), v)
	}
	if len(raw) > 0 {
		out["lxc"] = raw
	}
	out["digest"] = digest
	return out
}

// lxcTypedValue renders one config value by its schema type.
func lxcTypedValue(spec *ParamSpec, v string) any {
	if spec == nil {
		return v
	}
	switch spec.Type {
	case TypeInteger, TypeBoolean:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	case TypeNumber:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	case TypeString:
		// Returned as it is.
	}
	return v
}

func handleLXCConfigPut(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if !lxcHasOptions(r) {
		return nil, errInternal("no options specified")
	}
	// update_vm does everything else inside lock_config, with no early checks: a create's
	// file lock makes it wait (then "got timeout") before it looks at the lock property.
	if err := s.awaitFileLock(KindLXC, g.VMID); err != nil {
		return nil, err
	}
	if g, err = s.lxcGuest(r); err != nil { // it may have changed while we waited
		return nil, err
	}
	if err := checkLock(g, r); err != nil {
		return nil, err
	}
	if err := lxcCheckDigest(g, r); err != nil {
		return nil, err
	}
	reverts, err := lxcConfigIDList(r, "revert", nil)
	if err != nil {
		return nil, err
	}
	deletes, err := lxcConfigIDList(r, "delete", reverts)
	if err != nil {
		return nil, err
	}
	deletes, err = lxcCheckDeletes(g, deletes)
	if err != nil {
		return nil, err
	}
	if err := s.lxcCheckSets(g, r); err != nil {
		return nil, err
	}
	for _, k := range reverts {
		delete(g.Pending, k)
		delete(g.PendingDelete, k)
	}
	if err := s.lxcApplySets(g, r); err != nil {
		return nil, err
	}
	for _, k := range deletes {
		s.lxcDeleteKey(g, k)
	}
	s.touch(g)
	return nil, nil
}

// lxcConfigIDList parses a delete/revert list with update_vm's checks and messages
// (including PVE's unbalanced quote in the set-and-delete one); a delete that is also
// reverted is refused.
func lxcConfigIDList(r *request, name string, reverts []string) ([]string, error) {
	if !r.has(name) {
		return nil, nil
	}
	var out []string
	for _, k := range splitPVEList(r.str(name)) {
		switch {
		case lxcParamTypes.lookup(k) == nil && !strings.HasPrefix(k, "lxc."):
			return nil, errParam(name, fmt.Sprintf("unknown option '%s'", k))
		case r.has(k) && name == "delete":
			return nil, errParam(name, fmt.Sprintf("you can't use '-%s' and -delete %s' at the same time", k, k))
		case r.has(k):
			return nil, errParam(name, fmt.Sprintf("you can't use '-%s' and '-revert %s' at the same time", k, k))
		case contains(reverts, k):
			return nil, errParam(name, fmt.Sprintf("you can't use '-delete %s' and '-revert %s' at the same time", k, k))
		}
		out = append(out, k)
	}
	return out, nil
}

// lxcRequiredKeys are the options update_pct_config refuses to delete.
var lxcRequiredKeys = map[string]bool{"memory": true, "rootfs": true, "ostype": true}

// lxcCheckDeletes is update_pct_config's delete loop (pve-container src/PVE/LXC/Config.pm):
// a key set neither in the config nor pending is skipped (PVE only warns); required and
// read-only keys are refused, and mount points and unused volumes of a protected container.
// It returns the deletes that remain.
func lxcCheckDeletes(g *guest, deletes []string) ([]string, error) {
	var out []string
	for _, k := range deletes {
		_, set := g.Config[k]
		_, pending := g.Pending[k]
		if !set && !pending {
			continue
		}
		keyPrefix, _, indexed := splitIndexed(k)
		switch {
		case lxcRequiredKeys[k]:
			return nil, errInternal("unable to delete required option '%s'", k)
		case indexed && (keyPrefix == "unused" || keyPrefix == "mp") && g.Config["protection"] == "1":
			return nil, errInternal("can't remove CT %d drive '%s' - protection mode enabled", g.VMID, k)
		case k == "unprivileged":
			return nil, errInternal("unable to delete read-only option: '%s'", k)
		}
		out = append(out, k)
	}
	return out, nil
}

// lxcCheckSets is update_pct_config's checks of the set options, in key order: a mount
// point of a protected container cannot change, a volume mount point's storage must hold
// container directories, and unprivileged is fixed at create.
func (s *Server) lxcCheckSets(g *guest, r *request) error {
	for _, k := range sortedKeys(r.params) {
		if lxcPutOnly[k] {
			continue
		}
		switch {
		case isLXCDiskKey(k) && g.Config["protection"] == "1":
			return errInternal("can't update CT %d drive '%s' - protection mode enabled", g.VMID, k)
		case isLXCDiskKey(k):
			if err := s.lxcCheckMountContent(g.Node, r.params[k]); err != nil {
				return err
			}
		case k == "unprivileged":
			return errInternal("unable to modify read-only option: '%s'", k)
		}
	}
	return nil
}

// lxcCheckMountContent is update_pct_config's check_content_type of a volume mount point
// (a bind or device mount names a path and is not checked).
func (s *Server) lxcCheckMountContent(node, value string) error {
	vol, _ := driveVolume(value)
	stID, _, ok := splitVolID(vol)
	if !ok {
		return nil
	}
	st, found := s.st.storage(node, stID)
	if !found {
		return errInternal("storage '%s' does not exist", stID)
	}
	if !st.supports("rootdir") {
		return errInternal("storage '%s' does not allow content type 'rootdir' (Container)", stID)
	}
	return nil
}

// lxcApplyPending is vmconfig_apply_pending: a removed mount point's volume is kept as
// an unusedN entry, then the pending values replace the current ones.
func lxcApplyPending(g *guest) {
	for _, k := range sortedKeys(g.PendingDelete) {
		if keyPrefix, _, ok := splitIndexed(k); ok && keyPrefix == "mp" {
			if vol, _ := driveVolume(g.Config[k]); vol != "" && vmidOfVolume(vol) == g.VMID {
				g.Config[lxcFreeUnusedKey(g.Config)] = vol
			}
		}
	}
	g.applyPending()
}

// lxcHasOptions is update_vm's "no options specified" test: anything besides node, vmid and digest.
func lxcHasOptions(r *request) bool {
	for k := range r.params {
		if k != "node" && k != "vmid" && k != "digest" {
			return true
		}
	}
	return false
}

var lxcPutOnly = map[string]bool{"node": true, "vmid": true, "delete": true, "revert": true, "digest": true}

func (s *Server) lxcApplySets(g *guest, r *request) error {
	for _, k := range sortedKeys(r.params) {
		if lxcPutOnly[k] {
			continue
		}
		v := r.params[k]
		if isLXCDiskKey(k) {
			nv, err := s.allocDrive(g, k, v)
			if err != nil {
				return err
			}
			v = nv
		}
		if keyPrefix, idx, ok := splitIndexed(k); ok && keyPrefix == "net" {
			v = normalizeLXCNet(v, g.VMID, idx)
		}
		if g.running() && !lxcHotpluggable(g.Config, k) {
			g.Pending[k] = v
			delete(g.PendingDelete, k)
			continue
		}
		g.Config[k] = v
		delete(g.Pending, k)
		delete(g.PendingDelete, k)
	}
	return nil
}

// lxcDeleteKey removes a key; a deleted mount point's volume becomes an unusedN entry.
func (s *Server) lxcDeleteKey(g *guest, k string) {
	if g.running() && !lxcHotDeletable(k) {
		g.PendingDelete[k] = true
		delete(g.Pending, k)
		return
	}
	if keyPrefix, _, ok := splitIndexed(k); ok && keyPrefix == "mp" {
		if vol, _ := driveVolume(g.Config[k]); vmidOfVolume(vol) == g.VMID {
			g.Config[lxcFreeUnusedKey(g.Config)] = vol
		}
	}
	delete(g.Config, k)
	delete(g.Pending, k)
}

func lxcFreeUnusedKey(cfg map[string]string) string {
	for i := 0; ; i++ {
		k := "unused" + strconv.Itoa(i)
		if _, ok := cfg[k]; !ok {
			return k
		}
	}
}

// handleLXCPending lists keys with current and pending values, passed through as stored.
func handleLXCPending(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	return pendingItems(g, func(_, v string) any { return v }), nil
}
