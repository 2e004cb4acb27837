package pvesim

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Migration as qemu-server's migrate_vm API and PVE::QemuMigrate do it: the API checks the
// target, the lock, the power state against `online` and the storages before forking; HA
// resources are handed to the HA manager (a short hamigrate task, after which HA runs the
// migration itself); the qmigrate worker scans for what cannot move, locks the config with
// `migrate`, and moves the guest's config (and local volumes) to the target at the end.

// migration is what a migrate request asks for.
type migration struct {
	target        string
	online        bool
	force         bool
	localDisks    bool
	targetStorage string
	// restart: a container's restart migration; storageMap: its parsed target-storage.
	restart    bool
	storageMap storageMap
}

func handleQemuMigrate(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	m := migration{target: r.str("target"), online: r.bool("online"), force: r.bool("force"),
		localDisks: r.bool("with-local-disks"), targetStorage: r.str("targetstorage")}
	if err := s.checkMigrationRequest(g, r, &m); err != nil {
		return nil, err
	}
	if g.HAManaged {
		return s.startTask(r, taskDef{Type: "hamigrate", ID: strconv.Itoa(g.VMID), Node: g.Node,
			Finish: func(t *task) error {
				t.logf("Requesting HA migration for VM %d to node %s", g.VMID, m.target)
				s.haMigrate(g, m)
				return nil
			}}), nil
	}
	return s.startMigration(r.taskUser(), r.taskFault, g, m), nil
}

// checkMigrationRequest runs the checks migrate_vm makes before it forks a worker.
func (s *Server) checkMigrationRequest(g *guest, r *request, m *migration) error {
	if m.target == g.Node {
		return errParam("target", "target is local node.")
	}
	if !s.st.nodeSet[m.target] {
		return errInternal("no such cluster node '%s'", m.target)
	}
	if err := checkRootOnlyMigrateParams(r); err != nil {
		return err
	}
	if err := checkLock(g, r); err != nil {
		return err
	}
	if g.running() && !m.online {
		return errInternal("can't migrate running VM without --online")
	}
	if !g.running() {
		m.online = false // "VM isn't running. Doing offline migration instead."
	}
	if m.targetStorage == "" {
		return s.checkStorageAvailability(g, m.target)
	}
	return nil
}

// checkRootOnlyMigrateParams is migrate_vm's guard on force, migration_type and
// migration_network: each answers 400 with the message under its own name for anyone but
// root@pam (PVE checks them in this order and stops at the first).
func checkRootOnlyMigrateParams(r *request) error {
	if r.taskUser() == "root@pam" {
		return nil
	}
	for _, name := range []string{"force", "migration_type", "migration_network"} {
		if r.str(name) != "" && (name != "force" || r.bool(name)) {
			return errParam(name, "Only root may use this option.")
		}
	}
	return nil
}

// checkStorageAvailability is qemu-server's check_storage_availability: every storage a
// drive uses must exist on the target.
func (s *Server) checkStorageAvailability(g *guest, target string) error {
	for _, k := range driveKeys(g, g.Config) {
		vol, _ := driveVolume(g.Config[k])
		stID, _, ok := splitVolID(vol)
		if !ok {
			continue
		}
		if _, ok := s.st.storage(target, stID); !ok {
			return errInternal("storage '%s' is not available on node '%s'", stID, target)
		}
	}
	return nil
}

// haMigrate is the HA manager taking the request: it migrates the guest as root@pam after its
// own short delay, a VM online when it runs, a container always in restart mode (HA's
// PVECT resource has no other).
func (s *Server) haMigrate(g *guest, m migration) {
	time.AfterFunc(s.taskDuration("hamigrate"), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		cur, ok := s.st.guests[g.VMID]
		if !ok || cur != g || g.Node == m.target {
			return
		}
		if g.Kind == KindLXC {
			m.online, m.restart = false, true
			s.startLXCMigration("root@pam", "", g, m)
			return
		}
		m.online = g.running()
		s.startMigration("root@pam", "", g, m)
	})
}

// startMigration forks the qmigrate worker on the guest's node.
func (s *Server) startMigration(user, fault string, g *guest, m migration) string {
	source := g.Node
	begun := time.Now()
	return s.startTaskAs(user, fault, taskDef{Type: "qmigrate", ID: strconv.Itoa(g.VMID), Node: source,
		Begin: func(t *task) error {
			if err := s.qemuMigratePrepare(g, m, t); err != nil {
				// AbstractMigrate::migrate: a failed prepare is logged once, on the abort line.
				migLog(t, "err", fmt.Sprintf("migration aborted (duration %s): %s", taskClock(time.Since(begun)), err))
				return errMigrationAborted
			}
			migLog(t, "info", fmt.Sprintf("starting migration of VM %d to node '%s' (192.0.2.%d)", g.VMID, m.target, 10+len(m.target)%200))
			g.Config["lock"] = "migrate"
			s.touch(g)
			if err := s.scanVolumes(g, m, t); err != nil {
				s.unlockIf(g, "migrate") // phase1_cleanup
				return migrationAborted(t, begun, err)
			}
			return nil
		},
		Finish: func(t *task) error {
			cur, ok := s.st.guests[g.VMID]
			if !ok || cur != g {
				return errNoConfig(KindQemu, source, g.VMID)
			}
			s.unlockIf(g, "migrate")
			s.moveVolumes(g, m.target)
			g.Node = m.target
			s.touch(g)
			migLog(t, "info", fmt.Sprintf("migration finished successfully (duration %s)", taskClock(time.Since(begun))))
			return nil
		}})
}

// scanProblem is QemuMigrate's summary of a failed volume scan; the causes are in the log.
const scanProblem = "Problem found while scanning volumes - can't migrate VM - check log"

// scanVolumes is QemuMigrate's scan_local_volumes in phase 1: every local volume is logged
// (sorted, as PVE does), then every problem: a local ISO in a CD-ROM drive, the host's own
// CD-ROM drive, a local file or device path, and (for a live migration) attached local disks
// without with-local-disks. A local cloud-init drive is "generated" and never stops it.
func (s *Server) scanVolumes(g *guest, m migration, t *task) error {
	found, volErrs := map[string]string{}, map[string]string{}
	var other []string
	for _, k := range driveKeys(g, g.Config) {
		value := g.Config[k]
		vol, opts := driveVolume(value)
		switch {
		case vol == "" || vol == "none":
			continue
		case vol == "cdrom":
			other = append(other, "can't migrate local cdrom drive")
			continue
		case strings.HasPrefix(vol, "/"):
			if opts["shared"] != "1" {
				volErrs[vol] = "local file/device"
			}
			continue
		}
		st, _, ok := s.findVolume(g.Node, vol)
		if !ok || st.Shared {
			continue
		}
		generated := isCDROM(value) && reCloudInitVolume.MatchString(vol)
		switch {
		case generated:
			found[vol] = fmt.Sprintf("found generated disk '%s' (in current VM config)", vol)
		case strings.HasPrefix(k, "unused"):
			found[vol] = fmt.Sprintf("found local disk '%s' (unused)", vol)
		default:
			found[vol] = fmt.Sprintf("found local disk '%s' (attached)", vol)
		}
		switch {
		case generated:
		case isCDROM(value):
			volErrs[vol] = "local cdrom image"
		case !strings.HasPrefix(k, "unused") && m.online && !m.localDisks:
			volErrs[vol] = "can't live migrate attached local disks without with-local-disks option"
		}
	}
	for _, vol := range sortedKeys(found) {
		migLog(t, "info", found[vol])
	}
	for _, vol := range sortedKeys(volErrs) {
		migLog(t, "warn", fmt.Sprintf("can't migrate local disk '%s': %s", vol, volErrs[vol]))
	}
	for _, e := range other {
		migLog(t, "warn", e)
	}
	if len(volErrs)+len(other) > 0 {
		return fmt.Errorf("%s", scanProblem)
	}
	return nil
}

// reCloudInitVolume is qemu-server's drive_is_cloudinit.
var reCloudInitVolume = regexp.MustCompile(`[:/](?:vm-\d+-)?cloudinit(?:\.(?:raw|qcow|qcow2|qed|vmdk|cloop))?$`)

// qemuMigratePrepare is QemuMigrate's prepare after the checks migrate_vm already made:
// local resources (passed-through devices and the like) stop it unless force was given
// (AbstractMigrate sets running to 0 before prepare, so force also lets a running VM
// through here); a running VM may not use mapped devices that cannot migrate live; nor a
// VNC clipboard on a machine version older than 10.1. Mapped devices are taken to be
// mapped on every node (this simulator has no resource mappings).
func (s *Server) qemuMigratePrepare(g *guest, m migration, t *task) error {
	running := g.running() && m.online
	lr := qemuLocalResources(g, running)
	if blocking := lr.blocking(); len(blocking) > 0 {
		if !m.force {
			return fmt.Errorf("can't migrate VM which uses local devices: %s", strings.Join(blocking, ", "))
		}
		migLog(t, "info", "migrating VM which uses local devices")
	}
	if len(lr.mapped) > 0 {
		var notLive []string
		for _, k := range sortedKeys(lr.mapped) {
			if !lr.mapped[k].live {
				notLive = append(notLive, k+":"+lr.mapped[k].name)
			}
		}
		if running && len(notLive) > 0 {
			return fmt.Errorf("can't live migrate running VM which uses following mapped devices: %s", strings.Join(notLive, ", "))
		}
		migLog(t, "info", "migrating VM which uses mapped local devices")
	}
	if running && vncClipboardBlocks(g) {
		return errors.New("VMs with 'clipboard' set to 'vnc' are not live migratable with QEMU/machine versions older than 10.1!") //nolint:revive // qemu-server's own text, punctuation included
	}
	return nil
}

// errMigrationAborted is AbstractMigrate's exit status for every failed migration.
var errMigrationAborted = errors.New("migration aborted")

// migrationAborted logs QemuMigrate's phase 1 abort and ends the task the way it does: the
// reason in the log, the exit status only "migration aborted".
func migrationAborted(t *task, begun time.Time, err error) error {
	migLog(t, "err", err.Error())
	migLog(t, "info", "aborting phase 1 - cleanup resources")
	migLog(t, "err", fmt.Sprintf("migration aborted (duration %s): %s", taskClock(time.Since(begun)), err))
	return errMigrationAborted
}

// migLog is AbstractMigrate's log: each line stamped with the local time, "ERROR:" after
// the stamp for errors (warnings and info lines look alike).
func migLog(t *task, level, msg string) {
	prefix := time.Now().Format("2006-01-02 15:04:05")
	if level == "err" {
		prefix += " ERROR:"
	}
	for _, line := range strings.Split(strings.TrimRight(msg, "\n"), "\n") {
		t.logf("%s %s", prefix, line)
	}
}

// taskClock formats a duration as PVE's task logs do (00:00:05).
func taskClock(d time.Duration) string {
	sec := int(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", sec/3600, sec/60%60, sec%60)
}
