package pvesim

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Migration as qemu-server's migrate_vm API and PVE::QemuMigrate do it: the API checks the
// target, the lock, the power state against `online` and the storages before forking; HA
// resources are handed to the HA manager (a short hamigrate task, after which HA runs the
// migration itself); the qmigrate worker scans for what cannot move, locks the config with
// `migrate`, and moves the guest's config (and local volumes) to the target at the end.

func registerQemuMigrateRoutes(r *router, base string, nv func(...ParamSpec) []ParamSpec) {
	r.handle(RouteSpec{Method: http.MethodPost, Path: base + "/migrate", Params: nv(pString("target").req(), pInt("bwlimit").min(0),
		pBool("force"), pString("migration_network"), pEnum("migration_type", "secure", "insecure"), pBool("online"),
		pString("targetstorage"), pBool("with-conntrack-state"), pBool("with-local-disks"))}, handleQemuMigrate)
}

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
	if m.force && r.taskUser() != "root@pam" {
		return errParam("force", "Only root may use this option.")
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
			if devs := localDevices(g); len(devs) > 0 && (m.online || !m.force) {
				// QemuMigrate's prepare, before any log line of the migration proper.
				return fmt.Errorf("can't migrate VM which uses local devices: %s", strings.Join(devs, ", "))
			}
			t.logf("starting migration of VM %d to node '%s' (192.0.2.%d)", g.VMID, m.target, 10+len(m.target)%200)
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
			t.logf("migration finished successfully (duration %s)", taskClock(time.Since(begun)))
			return nil
		}})
}

// scanProblem is QemuMigrate's summary of a failed volume scan; the causes are in the log.
const scanProblem = "Problem found while scanning volumes - can't migrate VM - check log"

// scanVolumes is QemuMigrate's scan_local_volumes in phase 1: a local ISO in a CD-ROM drive
// and (for a live migration) local disks without with-local-disks stop it, each named in the
// log; a local cloud-init drive is regenerated on the target and never stops it.
func (s *Server) scanVolumes(g *guest, m migration, t *task) error {
	var problems []string
	for _, k := range driveKeys(g, g.Config) {
		vol, _ := driveVolume(g.Config[k])
		st, _, ok := s.findVolume(g.Node, vol)
		if !ok || st.Shared {
			continue
		}
		switch {
		case strings.Contains(vol, "-cloudinit"):
			t.logf("found generated disk '%s' (in current VM config)", vol)
		case isCDROM(g.Config[k]):
			problems = append(problems, fmt.Sprintf("can't migrate local disk '%s': local cdrom image", vol))
		case m.online && !m.localDisks:
			problems = append(problems, fmt.Sprintf("can't migrate local disk '%s': can't live migrate attached local disks without with-local-disks option", vol))
		default:
			t.logf("found local disk '%s' (in current VM config)", vol)
		}
	}
	for _, p := range problems {
		t.logf("%s", p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", scanProblem)
	}
	return nil
}

// localDevices are the passed-through host devices that tie a VM to its node (mapped
// devices can move; this simulator does not model mappings, so hostpci and usb with a host
// device count).
func localDevices(g *guest) []string {
	var devs []string
	for k, v := range g.Config {
		if strings.HasPrefix(k, "hostpci") && !strings.Contains(v, "mapping=") {
			devs = append(devs, k)
		}
		if strings.HasPrefix(k, "usb") && strings.Contains(v, "host=") && !strings.Contains(v, "host=spice") {
			devs = append(devs, k)
		}
	}
	sort.Strings(devs)
	return devs
}

// migrationAborted logs QemuMigrate's abort and ends the task the way it does: the reason
// in the log, the exit status only "migration aborted".
func migrationAborted(t *task, begun time.Time, err error) error {
	t.logf("ERROR: %s", err)
	t.logf("aborting phase 1 - cleanup resources")
	t.logf("ERROR: migration aborted (duration %s): %s", taskClock(time.Since(begun)), err)
	return fmt.Errorf("migration aborted")
}

// taskClock formats a duration as PVE's task logs do (00:00:05).
func taskClock(d time.Duration) string {
	sec := int(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", sec/3600, sec/60%60, sec%60)
}
