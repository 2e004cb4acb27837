package pvesim

import (
	"fmt"
	"strconv"
	"time"
)

// Container status and power actions under /nodes/{node}/lxc/{vmid}/status: pve-container src/PVE/API2/LXC/Status.pm.

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

// The power handlers only ask check_running before they fork (pve-container
// src/PVE/API2/LXC/Status.pm): a container that is not there is "not running" to stop,
// shutdown and reboot, and start's worker fails to load its config. The lock is checked by
// the worker, after the config is loaded.

// lxcGuestIfAny is the container a request names, nil when it has no config there (for
// the handlers that fork without loading it); a node outside the cluster is still refused.
func (s *Server) lxcGuestIfAny(r *request) (*guest, error) {
	if err := s.checkNode(r.node()); err != nil {
		return nil, err
	}
	g, ok := s.st.guests[r.vmid()]
	if !ok || g.Kind != KindLXC || g.Node != r.node() {
		g = nil
	}
	return g, nil
}

// lxcSkiplock is vm_start's and vm_stop's first check: skiplock is for root@pam only
// (an API token, even one of root@pam, is another user).
func lxcSkiplock(r *request) error {
	if r.bool("skiplock") && r.taskUser() != "root@pam" {
		return errParam("skiplock", "Only root may use this option.")
	}
	return nil
}

// lxcCheckLockUnlessMounted is the lock check of the start and stop workers: skiplock
// or the 'mounted' lock (pct mount) let them through.
func lxcCheckLockUnlessMounted(g *guest, r *request) error {
	if g.lock() == "mounted" {
		return nil
	}
	return checkLock(g, r)
}

func handleLXCStart(s *Server, r *request) (any, error) {
	if err := lxcSkiplock(r); err != nil {
		return nil, err
	}
	g, err := s.lxcGuestIfAny(r)
	if err != nil {
		return nil, err
	}
	if g != nil && g.running() {
		return nil, errInternal("CT %d already running", g.VMID)
	}
	return s.lxcPowerTask(r, "vzstart", func(g *guest) error {
		if g.isTemplate() {
			return fmt.Errorf("you can't start a CT if it's a template")
		}
		return lxcCheckLockUnlessMounted(g, r)
	}, func(g *guest) error {
		lxcApplyPending(g)
		s.setStatus(g, StatusRunning)
		return nil
	}), nil
}

// lxcPowerTask runs a power action as a worker: check runs when the worker loads the
// config (its failure is a task failure, as in pve-container), apply when it is done.
func (s *Server) lxcPowerTask(r *request, typ string, check, apply func(*guest) error) string {
	node, vmid := r.node(), r.vmid()
	loaded := func(step func(*guest) error) error {
		g, ok := s.st.guests[vmid]
		if !ok || g.Kind != KindLXC || g.Node != node {
			return errNoConfig(KindLXC, node, vmid)
		}
		return step(g)
	}
	return s.startTask(r, taskDef{Type: typ, ID: strconv.Itoa(vmid), Node: node,
		Begin:  func(*task) error { return loaded(check) },
		Finish: func(*task) error { return loaded(apply) },
	})
}

// lxcRequireRunning is check_running's refusal of the container the request names
// (also when it has no config); noun is "CT", but reboot's text says "VM".
func (s *Server) lxcRequireRunning(r *request, noun string) error {
	g, err := s.lxcGuestIfAny(r)
	if err != nil {
		return err
	}
	if g == nil || !g.running() {
		return errInternal("%s %d not running", noun, r.vmid())
	}
	return nil
}

func handleLXCStop(s *Server, r *request) (any, error) {
	if err := lxcSkiplock(r); err != nil {
		return nil, err
	}
	if err := s.lxcRequireRunning(r, "CT"); err != nil {
		return nil, err
	}
	return s.lxcPowerTask(r, "vzstop", func(g *guest) error { return lxcCheckLockUnlessMounted(g, r) }, s.lxcSetStopped), nil
}

func handleLXCShutdown(s *Server, r *request) (any, error) {
	if err := s.lxcRequireRunning(r, "CT"); err != nil {
		return nil, err
	}
	return s.lxcPowerTask(r, "vzshutdown", func(g *guest) error { return checkLock(g, r) }, s.lxcSetStopped), nil
}

func (s *Server) lxcSetStopped(g *guest) error {
	s.setStatus(g, StatusStopped)
	return nil
}

// handleLXCReboot restarts the container inside one task, applying pending changes.
// vm_reboot checks no lock itself: a locked container stops, and then its start fails in
// the prestart hook (lxc-pve-prestart-hook's check_lock), so systemctl reports the failure.
func handleLXCReboot(s *Server, r *request) (any, error) {
	if err := s.lxcRequireRunning(r, "VM"); err != nil {
		return nil, err
	}
	return s.lxcPowerTask(r, "vzreboot", func(*guest) error { return nil }, func(g *guest) error {
		s.setStatus(g, StatusStopped)
		lxcApplyPending(g)
		if l := g.lock(); l != "" && l != "mounted" {
			return fmt.Errorf("command 'systemctl start pve-container@%d' failed: exit code 1", g.VMID)
		}
		s.setStatus(g, StatusRunning)
		return nil
	}), nil
}
