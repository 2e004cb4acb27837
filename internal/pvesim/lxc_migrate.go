package pvesim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Container migration as pve-container's migrate_vm API and PVE::LXC::Migrate do it. The API
// checks the target, that a running container is asked to move with `online` or `restart`, and
// the target-storage map before forking; HA resources are handed to the HA manager
// (hamigrate), which always runs a restart migration. The vzmigrate worker's prepare refuses a
// live migration of a running container ("lxc live migration is currently not implemented"),
// local bind/device mount points and volumes whose storage the target lacks, then shuts a
// running container down (restart mode); phase 1 locks the config with `migrate` and moves the
// local volumes; the config moves to the target at the end, where the container is started
// again. Any failure ends the task with AbstractMigrate's "migration aborted", the reason in
// the log.

// handleLXCMigratePrecondition is pve-container's migrate_vm_precondition: the config must
// be on {node} and unlocked; it reports the power state and every other node as allowed,
// since only HA resource-affinity rules (not modelled here) put a node among
// not-allowed-nodes. Unlike qemu-server's, its keys are dashed, and a node only appears in
// not-allowed-nodes when something blocks it. The target parameter is ignored.
func handleLXCMigratePrecondition(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if l := g.lock(); l != "" {
		return nil, errInternal("CT is locked (%s)", l)
	}
	res := map[string]any{
		"running":           boolInt(g.running()),
		"allowed-nodes":     s.otherNodes(g.Node),
		"not-allowed-nodes": map[string]any{},
	}
	if g.HAManaged {
		res["dependent-ha-resources"] = []string{}
	}
	return res, nil
}

func handleLXCMigrate(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	m := migration{target: r.str("target"), online: r.bool("online"), restart: r.bool("restart"), targetStorage: r.str("target-storage")}
	if err := s.checkLXCMigrationRequest(g, &m); err != nil {
		return nil, err
	}
	if g.HAManaged {
		return s.startTask(r, taskDef{Type: "hamigrate", ID: strconv.Itoa(g.VMID), Node: g.Node,
			Finish: func(t *task) error {
				t.logf("Requesting HA migration for CT %d to node %s", g.VMID, m.target)
				s.haMigrate(g, m)
				return nil
			}}), nil
	}
	return s.startLXCMigration(r.taskUser(), r.taskFault, g, m), nil
}

// checkLXCMigrationRequest runs the checks migrate_vm makes before it forks a worker.
func (s *Server) checkLXCMigrationRequest(g *guest, m *migration) error {
	if m.target == g.Node {
		return errParam("target", "target is local node.")
	}
	if !s.st.nodeSet[m.target] {
		return errInternal("no such cluster node '%s'", m.target)
	}
	if g.running() && !m.online && !m.restart {
		return errInternal("can't migrate running container without --online or --restart")
	}
	if m.targetStorage == "" {
		return nil
	}
	sm, err := parseStorageMap(m.targetStorage)
	if err != nil {
		return errParam("target-storage", "failed to parse storage map: "+err.Error())
	}
	m.storageMap = sm
	for _, id := range sm.targets() {
		if err := s.checkLXCMigrateStorage(id, m.target); err != nil {
			return err
		}
	}
	return nil
}

// checkLXCMigrateStorage is pve-container's check_storage_access_migrate for a target storage.
func (s *Server) checkLXCMigrateStorage(id, node string) error {
	st, ok := s.st.storage(node, id)
	if !ok {
		return errInternal("storage '%s' is not available on node '%s'", id, node)
	}
	if !st.supports("rootdir") {
		return errInternal("storage '%s' does not support CT rootdirs", id)
	}
	return nil
}

// storageMap is PVE's storage-pair-list as parse_idmap reads it: source:target pairs, a lone
// storage ID that every source maps to, or "1" for the identity.
type storageMap struct {
	entries  map[string]string
	fallback string
}

func parseStorageMap(v string) (storageMap, error) {
	sm := storageMap{entries: map[string]string{}}
	if v == "1" {
		return sm, nil
	}
	for _, pair := range strings.Split(v, ",") {
		src, dst, isPair := strings.Cut(strings.TrimSpace(pair), ":")
		switch {
		case !isPair && sm.fallback == "" && src != "":
			sm.fallback = src
		case isPair && src != "" && dst != "" && sm.entries[src] == "":
			sm.entries[src] = dst
		default:
			return storageMap{}, fmt.Errorf("invalid map entry '%s'", pair)
		}
	}
	return sm, nil
}

// targets lists the storages the map names on the target.
func (sm storageMap) targets() []string {
	out := make([]string, 0, len(sm.entries)+1)
	for _, k := range sortedKeys(sm.entries) {
		out = append(out, sm.entries[k])
	}
	if sm.fallback != "" {
		out = append(out, sm.fallback)
	}
	return out
}

// target is map_id: where a source storage's volumes go.
func (sm storageMap) target(src string) string {
	if dst, ok := sm.entries[src]; ok {
		return dst
	}
	if sm.fallback != "" {
		return sm.fallback
	}
	return src
}

// startLXCMigration forks the vzmigrate worker on the container's node.
func (s *Server) startLXCMigration(user, fault string, g *guest, m migration) string {
	source := g.Node
	begun := time.Now()
	wasRunning := false
	return s.startTaskAs(user, fault, taskDef{Type: "vzmigrate", ID: strconv.Itoa(g.VMID), Node: source,
		Begin: func(t *task) error {
			if err := s.lxcMigratePrepare(g, m); err != nil {
				migLog(t, "err", fmt.Sprintf("migration aborted (duration %s): %s", taskClock(time.Since(begun)), err))
				return errMigrationAborted
			}
			if m.restart && g.running() {
				wasRunning = true
				migLog(t, "info", fmt.Sprintf("shutdown CT %d", g.VMID))
				s.setStatus(g, StatusStopped)
			}
			migLog(t, "info", fmt.Sprintf("starting migration of CT %d to node '%s' (192.0.2.%d)", g.VMID, m.target, 10+len(m.target)%200))
			g.Config["lock"] = "migrate"
			s.touch(g)
			s.logLXCVolumes(g, t)
			return nil
		},
		Finish: func(t *task) error {
			cur, ok := s.st.guests[g.VMID]
			if !ok || cur != g {
				return errNoConfig(KindLXC, source, g.VMID)
			}
			if err := s.moveLXCVolumes(g, m, t); err != nil {
				// phase1_cleanup and final_cleanup: the container stays, unlocked,
				// and runs again on the source when it ran before.
				migLog(t, "err", err.Error())
				migLog(t, "info", "aborting phase 1 - cleanup resources")
				s.unlockIf(g, "migrate")
				if wasRunning {
					migLog(t, "info", "start container on source node")
					s.setStatus(g, StatusRunning)
				}
				migLog(t, "err", fmt.Sprintf("migration aborted (duration %s): %s", taskClock(time.Since(begun)), err))
				return errMigrationAborted
			}
			g.Node = m.target
			s.unlockIf(g, "migrate")
			migLog(t, "info", "start final cleanup")
			if wasRunning {
				migLog(t, "info", "start container on target node")
				s.setStatus(g, StatusRunning)
			}
			s.touch(g)
			migLog(t, "info", fmt.Sprintf("migration finished successfully (duration %s)", taskClock(time.Since(begun))))
			return nil
		}})
}

// lxcMigratePrepare is PVE::LXC::Migrate's prepare: the lock, the power state against the
// mode, and every mount point's storage on the target.
func (s *Server) lxcMigratePrepare(g *guest, m migration) error {
	if cur, ok := s.st.guests[g.VMID]; !ok || cur != g {
		return errNoConfig(KindLXC, g.Node, g.VMID)
	}
	if l := g.lock(); l != "" {
		return fmt.Errorf("CT is locked (%s)", l)
	}
	if g.running() && m.online {
		return fmt.Errorf("lxc live migration is currently not implemented")
	}
	if g.running() && !m.restart {
		return fmt.Errorf("running container can only be migrated in restart mode")
	}
	for _, k := range driveKeys(g, g.Config) {
		vol, opts := driveVolume(g.Config[k])
		stID, _, ok := splitVolID(vol)
		if !ok {
			// A bind or device mount point: only one marked shared may move.
			if opts["shared"] != "1" {
				return fmt.Errorf("cannot migrate local %s mount point '%s'", lxcMountType(vol), k)
			}
			continue
		}
		st, ok := s.st.storage(g.Node, stID)
		if !ok {
			return fmt.Errorf("storage '%s' does not exist", stID)
		}
		dst := stID
		if !st.Shared {
			dst = m.storageMap.target(stID)
		}
		if _, ok := s.st.storage(m.target, dst); !ok {
			return fmt.Errorf("storage '%s' is not available on node '%s'", dst, m.target)
		}
	}
	return nil
}

// lxcMountType tells a device mount point (/dev/...) from a bind mount.
func lxcMountType(path string) string {
	if strings.HasPrefix(path, "/dev/") {
		return "device"
	}
	return "bind"
}

// logLXCVolumes logs phase 1's scan: shared volumes stay, local ones move.
func (s *Server) logLXCVolumes(g *guest, t *task) {
	for _, k := range driveKeys(g, g.Config) {
		vol, _ := driveVolume(g.Config[k])
		st, _, ok := s.findVolume(g.Node, vol)
		switch {
		case !ok:
		case st.Shared:
			migLog(t, "info", fmt.Sprintf("volume '%s' is on shared storage '%s'", vol, st.ID))
		default:
			migLog(t, "info", fmt.Sprintf("found local volume '%s' (in current VM config)", vol))
		}
	}
}

// moveLXCVolumes moves the container's local volumes to the target, onto the storage the map
// names (a new volume ID there when it differs), and rewrites the config to match. A volume
// that cannot be allocated on the target fails the whole move (storage_migrate dies), leaving
// the source as it was.
func (s *Server) moveLXCVolumes(g *guest, m migration, t *task) error {
	type move struct {
		key     string
		src     *storage
		vol     *volume
		dst     *storage
		renamed *volume
		opts    map[string]string
	}
	var moves []move
	for _, k := range driveKeys(g, g.Config) {
		volid, opts := driveVolume(g.Config[k])
		st, v, ok := s.findVolume(g.Node, volid)
		if !ok || st.Shared {
			continue
		}
		dstID := m.storageMap.target(st.ID)
		dst, ok := s.st.storage(m.target, dstID)
		if !ok {
			return fmt.Errorf("storage migration for '%s' to storage '%s' failed - storage '%s' does not exist", volid, dstID, dstID)
		}
		mv := move{key: k, src: st, vol: v, dst: dst, opts: opts}
		if dstID != st.ID {
			nv, err := s.allocDisk(m.target, dstID, g.VMID, v.Size, v.Content)
			if err != nil {
				for _, done := range moves {
					if done.renamed != nil {
						done.dst.removeVolume(done.renamed.VolID)
					}
				}
				return fmt.Errorf("storage migration for '%s' to storage '%s' failed - %w", volid, dstID, err)
			}
			mv.renamed = nv
		}
		moves = append(moves, mv)
	}
	for _, mv := range moves {
		mv.src.removeVolume(mv.vol.VolID)
		if mv.renamed == nil {
			mv.dst.addVolume(mv.vol)
			continue
		}
		g.Config[mv.key] = driveValue(mv.renamed.VolID, mv.opts)
		migLog(t, "info", fmt.Sprintf("volume '%s' is '%s' on the target", mv.vol.VolID, mv.renamed.VolID))
	}
	return nil
}
