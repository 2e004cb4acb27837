package pvesim

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func registerQemuSnapshotRoutes(r *router, base string, nv func(...ParamSpec) []ParamSpec) {
	snap := base + "/snapshot/{snapname}"
	snapname := pString("snapname").req()
	r.handle(RouteSpec{Method: http.MethodGet, Path: base + "/snapshot", Params: nv()}, handleQemuSnapshotList)
	r.handle(RouteSpec{Method: http.MethodPost, Path: base + "/snapshot", Params: nv(snapname, pString("description"), pBool("vmstate"))}, handleQemuSnapshotCreate)
	r.handle(RouteSpec{Method: http.MethodGet, Path: snap, Params: nv(snapname)}, handleQemuSnapshotIndex)
	r.handle(RouteSpec{Method: http.MethodDelete, Path: snap, Params: nv(snapname, pBool("force"))}, handleQemuSnapshotDelete)
	r.handle(RouteSpec{Method: http.MethodGet, Path: snap + "/config", Params: nv(snapname)}, handleQemuSnapshotConfigGet)
	r.handle(RouteSpec{Method: http.MethodPut, Path: snap + "/config", Params: nv(snapname, pString("description"))}, handleQemuSnapshotConfigPut)
	r.handle(RouteSpec{Method: http.MethodPost, Path: snap + "/rollback", Params: nv(snapname, pBool("start"))}, handleQemuRollback)
	r.handle(RouteSpec{Method: http.MethodPost, Path: base + "/template", Params: nv(pEnum("disk", diskEnum()...))}, handleQemuTemplate)
	r.handle(RouteSpec{Method: http.MethodPut, Path: base + "/resize", Params: nv(pEnum("disk", diskEnum()...).req(),
		pString("size").req().pattern(`\+?\d+(\.\d+)?[KMGT]?`), pString("digest"), pBool("skiplock"))}, handleQemuResize)
}

func (g *guest) findSnapshot(name string) *snapshot {
	for _, sn := range g.Snapshots {
		if sn.Name == name {
			return sn
		}
	}
	return nil
}

// handleQemuSnapshotList lists snapshots and always ends with PVE's "current" pseudo-entry.
func handleQemuSnapshotList(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, sn := range g.Snapshots {
		item := map[string]any{"name": sn.Name, "description": sn.Description, "snaptime": sn.SnapTime}
		if sn.VMState {
			item["vmstate"] = 1
		}
		if sn.Parent != "" {
			item["parent"] = sn.Parent
		}
		out = append(out, item)
	}
	cur := map[string]any{"name": "current", "description": "You are here!", "running": boolNum(g.running()), "digest": g.digest()}
	if p := g.Config["parent"]; p != "" {
		cur["parent"] = p
	}
	return append(out, cur), nil
}

var reConfigID = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_\-]{1,39}$`)

// handleQemuSnapshotCreate refuses reserved names synchronously; everything else happens
// in the qmsnapshot task, which holds the "snapshot" lock while it runs.
func handleQemuSnapshotCreate(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	name := r.str("snapname")
	if name == "current" || strings.EqualFold(name, "pending") {
		return nil, errInternal("unable to use snapshot name '%s' (reserved name)", name)
	}
	if !reConfigID.MatchString(name) {
		return nil, errParam("snapname", "invalid format - invalid configuration ID '"+name+"'")
	}
	return s.startTask(r, taskDef{Type: "qmsnapshot", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Begin: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			if err := checkLock(g, r); err != nil {
				return err
			}
			if g.isTemplate() {
				return errInternal("you can't take a snapshot if it's a template")
			}
			if g.findSnapshot(name) != nil {
				return errInternal("snapshot name '%s' already used", name)
			}
			g.Config["lock"] = "snapshot"
			s.touch(g)
			return nil
		},
		Finish: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			delete(g.Config, "lock")
			cfg := copyMap(g.Config)
			delete(cfg, "parent")
			sn := &snapshot{Name: name, Description: r.str("description"), SnapTime: time.Now().Unix(),
				VMState: r.bool("vmstate") && g.running(), Parent: g.Config["parent"], Config: cfg}
			cfg["snaptime"] = strconv.FormatInt(sn.SnapTime, 10)
			g.Snapshots = append(g.Snapshots, sn)
			g.Config["parent"] = name
			s.touch(g)
			return nil
		},
		OnFail: func() { s.unlockIf(g, "snapshot") },
	}), nil
}

// stillThere fails a task whose guest was removed meanwhile.
func (s *Server) stillThere(g *guest) error {
	if s.st.guests[g.VMID] != g {
		return errNoConfig(g.Kind, g.Node, g.VMID)
	}
	return nil
}

func (s *Server) unlockIf(g *guest, lock string) {
	if g.lock() == lock {
		delete(g.Config, "lock")
		s.touch(g)
	}
}

func handleQemuSnapshotIndex(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	if g.findSnapshot(r.str("snapname")) == nil {
		return nil, errInternal("snapshot '%s' does not exist", r.str("snapname"))
	}
	return []map[string]string{{"rollback": "rollback"}, {"config": "config"}}, nil
}

func handleQemuSnapshotConfigGet(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	sn := g.findSnapshot(r.str("snapname"))
	if sn == nil {
		return nil, errInternal("snapshot '%s' does not exist", r.str("snapname"))
	}
	out := typedConfig(sn.Config, qemuParamTypes)
	out["description"] = sn.Description
	if sn.Parent != "" {
		out["parent"] = sn.Parent
	}
	return out, nil
}

func handleQemuSnapshotConfigPut(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	sn := g.findSnapshot(r.str("snapname"))
	if sn == nil {
		return nil, errInternal("snapshot '%s' does not exist", r.str("snapname"))
	}
	if r.has("description") {
		sn.Description = r.str("description")
		s.markDirty()
	}
	return nil, nil
}

func handleQemuSnapshotDelete(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	name := r.str("snapname")
	return s.startTask(r, taskDef{Type: "qmdelsnapshot", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Begin: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			if g.findSnapshot(name) == nil {
				return errInternal("snapshot '%s' does not exist", name)
			}
			if err := checkLock(g, r); err != nil {
				return err
			}
			g.Config["lock"] = "snapshot-delete"
			s.touch(g)
			return nil
		},
		Finish: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			s.removeSnapshot(g, name)
			s.unlockIf(g, "snapshot-delete")
			return nil
		},
		OnFail: func() { s.unlockIf(g, "snapshot-delete") },
	}), nil
}

// removeSnapshot drops a snapshot and re-parents its children, as PVE's snapshot_delete.
func (s *Server) removeSnapshot(g *guest, name string) {
	sn := g.findSnapshot(name)
	if sn == nil {
		return
	}
	kept := g.Snapshots[:0:0]
	for _, other := range g.Snapshots {
		if other == sn {
			continue
		}
		if other.Parent == name {
			other.Parent = sn.Parent
		}
		kept = append(kept, other)
	}
	g.Snapshots = kept
	if g.Config["parent"] == name {
		if sn.Parent != "" {
			g.Config["parent"] = sn.Parent
		} else {
			delete(g.Config, "parent")
		}
	}
	s.markDirty()
}

func handleQemuRollback(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	name := r.str("snapname")
	return s.startTask(r, taskDef{Type: "qmrollback", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Begin: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			if g.findSnapshot(name) == nil {
				return errInternal("snapshot '%s' does not exist", name)
			}
			if err := checkLock(g, r); err != nil {
				return err
			}
			g.Config["lock"] = "rollback"
			s.touch(g)
			return nil
		},
		Finish: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			sn := g.findSnapshot(name)
			if sn == nil {
				return errInternal("snapshot '%s' does not exist", name)
			}
			if g.running() && !sn.VMState {
				s.powerOff(g)
			}
			cfg := copyMap(sn.Config)
			delete(cfg, "snaptime")
			cfg["parent"] = name
			g.Config = cfg
			g.Pending, g.PendingDelete = map[string]string{}, map[string]bool{}
			s.touch(g)
			if r.bool("start") && !g.running() {
				s.powerOn(g)
			}
			return nil
		},
		OnFail: func() { s.unlockIf(g, "rollback") },
	}), nil
}

// handleQemuTemplate refuses running VMs and VMs with snapshots synchronously.
func handleQemuTemplate(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	if err := checkLock(g, r); err != nil {
		return nil, err
	}
	if g.isTemplate() {
		return nil, errInternal("you can't convert a template to a template")
	}
	if g.running() {
		return nil, errInternal("you can't convert a VM to template if VM is running")
	}
	if len(g.Snapshots) > 0 {
		return nil, errInternal("unable to create template, because VM contains snapshots")
	}
	return s.startTask(r, taskDef{Type: "qmtemplate", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Finish: func(*task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			if g.running() {
				return errInternal("you can't convert a VM to template if VM is running")
			}
			s.makeTemplate(g)
			s.touch(g)
			return nil
		}}), nil
}

// handleQemuResize grows a disk in a resize task; every check, the shrink refusal
// included, is a task failure as in PVE.
func handleQemuResize(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	return s.startTask(r, taskDef{Type: "resize", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Finish: func(t *task) error {
			if err := s.stillThere(g); err != nil {
				return err
			}
			if d := r.str("digest"); d != "" && d != g.digest() {
				return errInternal("detected modified configuration - file changed by other user? Try again.")
			}
			if err := checkLock(g, r); err != nil {
				return err
			}
			return s.resizeDisk(g, r.str("disk"), r.str("size"), t)
		}}), nil
}

func (s *Server) resizeDisk(g *guest, disk, size string, t *task) error {
	value, ok := g.Config[disk]
	if !ok {
		return errInternal("disk '%s' does not exist", disk)
	}
	if isCDROM(value) {
		return errInternal("you can't resize a cdrom")
	}
	vol, opts := driveVolume(value)
	_, v, found := s.findVolume(g.Node, vol)
	if !found {
		return errInternal("volume '%s' does not exist", vol)
	}
	grow := strings.HasPrefix(size, "+")
	n, okSize := parseSize(strings.TrimPrefix(size, "+"))
	if !okSize {
		return errInternal("invalid size '%s'", size)
	}
	newSize := n
	if grow {
		newSize = v.Size + n
	}
	if newSize < v.Size {
		return errInternal("shrinking disks is not supported")
	}
	if newSize == v.Size {
		t.logf("no change")
		return nil
	}
	v.Size = newSize
	opts["size"] = formatSize(newSize)
	g.Config[disk] = driveValue(vol, opts)
	t.logf("  Size of logical volume changed to %s.", formatSize(newSize))
	s.touch(g)
	return nil
}
