package pvesim

import (
	"fmt"
	"strconv"
	"time"
)

// Container listing, status and power actions: pve-container src/PVE/API2/LXC/Status.pm.

func handleLXCList(s *Server, r *request) (any, error) {
	now := time.Now()
	return s.listGuests(r.node(), KindLXC, func(g *guest) map[string]any { return lxcStatus(g, now) })
}

// lxcStatus is PVE::LXC::vmstatus for one container: template only when it is one.
func lxcStatus(g *guest, now time.Time) map[string]any {
	m := map[string]any{
		"vmid": g.VMID, "status": g.Status, "type": "lxc", "cpus": guestCPUs(g), "maxmem": guestMaxMem(g),
		"maxswap": int64(atoiDefault(g.Config["swap"], 512)) * mib, "maxdisk": guestMaxDisk(g),
		"cpu": 0, "mem": 0, "swap": 0, "disk": 0, "netin": 0, "netout": 0, "diskread": 0, "diskwrite": 0, "uptime": 0,
	}
	if n := g.name(); n != "" {
		m["name"] = n
	}
	if g.running() && !g.StartedAt.IsZero() {
		m["uptime"] = int64(now.Sub(g.StartedAt).Seconds())
		m["mem"] = guestMaxMem(g) / 8
		m["cpu"] = 0.005
	}
	if l := g.lock(); l != "" {
		m["lock"] = l
	}
	if tags := g.Config["tags"]; tags != "" {
		m["tags"] = tags
	}
	if g.isTemplate() {
		m["template"] = 1
	}
	return m
}

func handleLXCStatus(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	m := lxcStatus(g, time.Now())
	m["ha"] = map[string]any{"managed": boolNum(g.HAManaged)}
	return m, nil
}

func handleLXCStart(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if g.running() {
		return nil, errInternal("CT %d already running", g.VMID)
	}
	// pve-container checks the template flag and the lock inside the vzstart worker.
	return s.lxcPowerTask(r, g, "vzstart", func() error {
		if g.isTemplate() {
			return fmt.Errorf("you can't start a CT if it's a template")
		}
		return checkLock(g, r)
	}, func() {
		lxcApplyPending(g)
		s.setStatus(g, StatusRunning)
	}), nil
}

// lxcPowerTask runs a power action as a worker: check runs when the worker loads the
// config (its failure is a task failure, as in pve-container), apply when it is done.
func (s *Server) lxcPowerTask(r *request, g *guest, typ string, check func() error, apply func()) string {
	exists := func() error {
		if cur, ok := s.st.guests[g.VMID]; !ok || cur != g {
			return errNoConfig(KindLXC, g.Node, g.VMID)
		}
		return nil
	}
	return s.startTask(r, taskDef{Type: typ, ID: strconv.Itoa(g.VMID), Node: g.Node,
		Begin: func(*task) error {
			if err := exists(); err != nil {
				return err
			}
			return check()
		},
		Finish: func(*task) error {
			if err := exists(); err != nil {
				return err
			}
			apply()
			return nil
		}})
}

func (s *Server) lxcRequireRunning(g *guest) error {
	if !g.running() {
		return errInternal("CT %d not running", g.VMID)
	}
	return nil
}

func handleLXCStop(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if err := s.lxcRequireRunning(g); err != nil {
		return nil, err
	}
	return s.lxcPowerTask(r, g, "vzstop", func() error { return checkLock(g, r) }, func() { s.setStatus(g, StatusStopped) }), nil
}

func handleLXCShutdown(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if err := s.lxcRequireRunning(g); err != nil {
		return nil, err
	}
	return s.lxcPowerTask(r, g, "vzshutdown", func() error { return checkLock(g, r) }, func() { s.setStatus(g, StatusStopped) }), nil
}

// handleLXCReboot restarts the container inside one task, applying pending changes.
func handleLXCReboot(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if err := s.lxcRequireRunning(g); err != nil {
		return nil, err
	}
	return s.lxcPowerTask(r, g, "vzreboot", func() error { return checkLock(g, r) }, func() {
		s.setStatus(g, StatusStopped)
		lxcApplyPending(g)
		s.setStatus(g, StatusRunning)
	}), nil
}
