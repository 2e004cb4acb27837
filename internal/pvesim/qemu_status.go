package pvesim

import (
	"strconv"
	"time"
)

// qemuStatusFields is a VM's entry in /qemu and the base of status/current. The template
// key is present only on templates: go-proxmox treats any value, 0 included, as a template.
func qemuStatusFields(g *guest, current bool) map[string]any {
	m := map[string]any{
		"vmid": g.VMID, "status": g.Status, "cpus": guestCPUs(g), "maxmem": guestMaxMem(g), "maxdisk": guestMaxDisk(g),
		"mem": 0, "cpu": 0, "disk": 0, "netin": 0, "netout": 0, "diskread": 0, "diskwrite": 0, "uptime": 0,
	}
	if n := g.name(); n != "" {
		m["name"] = n
	}
	if g.running() {
		m["uptime"] = int64(time.Since(g.StartedAt).Seconds())
		m["pid"] = 10000 + g.VMID%50000
		m["mem"] = guestMaxMem(g) / 4
		m["cpu"] = 0.01
	}
	if t := g.Config["tags"]; t != "" {
		m["tags"] = t
	}
	if l := g.lock(); l != "" {
		m["lock"] = l
	}
	if g.isTemplate() {
		m["template"] = 1
	}
	if current {
		m["qmpstatus"] = g.qmpStatus()
		m["ha"] = map[string]any{"managed": boolNum(g.HAManaged)}
		if agentEnabled(g) {
			m["agent"] = 1
		}
		if g.running() {
			m["running-machine"] = "pc-i440fx-9.2+pve1"
			m["running-qemu"] = "9.2.0"
		}
		if _, ok := g.Config["serial0"]; ok {
			m["serial"] = 1
		}
	}
	return m
}

func (g *guest) qmpStatus() string {
	if g.Paused && g.running() {
		return "paused"
	}
	return g.Status
}

func handleQemuStatus(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	return qemuStatusFields(g, true), nil
}

// powerOn starts a VM: pending changes apply and the cloud-init drive is regenerated.
func (s *Server) powerOn(g *guest) {
	g.applyPending()
	g.CIApplied = ciKeys(g.Config)
	g.Paused = false
	s.setStatus(g, StatusRunning)
}

func (s *Server) powerOff(g *guest) {
	g.Paused = false
	s.setStatus(g, StatusStopped)
}

// vmTask starts a power task for the VM named by the request; all checks run in the task
// as in PVE's workers, so they surface as failed tasks.
func (s *Server) vmTask(r *request, typ string, begin func(g *guest) error, finish func(g *guest, t *task) error) (any, error) {
	return s.vmTaskLasting(r, typ, nil, begin, finish)
}

// vmTaskLasting is vmTask for a task whose run time depends on the guest: lasts, when set,
// says how long at least (a shutdown the guest ignores waits out its timeout).
func (s *Server) vmTaskLasting(r *request, typ string, lasts func(g *guest) time.Duration, begin func(g *guest) error,
	finish func(g *guest, t *task) error,
) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	var atLeast time.Duration
	if lasts != nil {
		atLeast = lasts(g)
	}
	lookup := func() (*guest, error) {
		cur, ok := s.st.guests[g.VMID]
		if !ok || cur.Kind != KindQemu {
			return nil, errNoConfig(KindQemu, g.Node, g.VMID)
		}
		return cur, nil
	}
	return s.startTask(r, taskDef{Type: typ, ID: strconv.Itoa(g.VMID), Node: g.Node, AtLeast: atLeast,
		Begin: func(*task) error {
			cur, err := lookup()
			if err != nil {
				return err
			}
			if begin != nil {
				return begin(cur)
			}
			return nil
		},
		Finish: func(t *task) error {
			cur, err := lookup()
			if err != nil {
				return err
			}
			return finish(cur, t)
		}}), nil
}

func handleQemuStart(s *Server, r *request) (any, error) {
	return s.vmTask(r, "qmstart", func(g *guest) error {
		if g.isTemplate() {
			return errInternal("you can't start a vm if it's a template")
		}
		if err := checkLock(g, r); err != nil {
			return err
		}
		if g.running() {
			return errInternal("VM %d already running", g.VMID)
		}
		return nil
	}, func(g *guest, t *task) error {
		if g.running() {
			return errInternal("VM %d already running", g.VMID)
		}
		t.logf("generating cloud-init ISO")
		if err := s.failStartOnMissingBridge(g, t); err != nil {
			return err
		}
		s.powerOn(g)
		return nil
	})
}

func handleQemuStop(s *Server, r *request) (any, error) {
	return s.vmTask(r, "qmstop", func(g *guest) error { return checkLock(g, r) }, func(g *guest, _ *task) error {
		s.powerOff(g)
		return nil
	})
}

// defaultShutdownTimeout is how long qemu-server's _do_vm_stop waits for a guest to power off
// when the request names no timeout.
const defaultShutdownTimeout = 60 * time.Second

// handleQemuShutdown follows qemu-server's _do_vm_stop: the guest is asked to power off
// through its agent when one is configured, else with an ACPI power button press. A guest
// that does not react (acpi: 0, or an agent configured but not running) fails the task with
// PVE's message, or with forceStop is terminated after the timeout: _do_vm_stop says so with a
// plain Perl warn, which only writes the task log (only $rpcenv->warn counts towards TASK
// WARNINGS, pve-common RESTEnvironment), so the task still ends OK.
func handleQemuShutdown(s *Server, r *request) (any, error) {
	timeout := defaultShutdownTimeout
	if v, ok := r.params["timeout"]; ok {
		n, _ := strconv.Atoi(v) // the router validated it as an integer ≥ 0
		timeout = time.Duration(n) * time.Second
	}
	force := r.bool("forceStop")
	waits := func(g *guest) time.Duration {
		if s.powerdownRefused(g) == nil && ignoresPowerButton(g) {
			return timeout
		}
		return 0
	}
	return s.vmTaskLasting(r, "qmshutdown", waits, func(g *guest) error { return checkLock(g, r) }, func(g *guest, t *task) error {
		if err := s.powerdownRefused(g); err != nil {
			if !force {
				return errInternal("VM quit/powerdown failed")
			}
			t.logf("VM quit/powerdown failed - terminating now with SIGTERM")
			s.powerOff(g)
			return nil
		}
		if ignoresPowerButton(g) {
			if !force {
				return errInternal("VM quit/powerdown failed - got timeout")
			}
			t.logf("VM still running - terminating now with SIGTERM")
			s.powerOff(g)
			return nil
		}
		s.powerOff(g)
		return nil
	})
}

// powerdownRefused is the error of the command that asks the guest to power off: with an
// agent configured it goes through the agent (guest-shutdown), which fails while the agent
// is not up.
func (s *Server) powerdownRefused(g *guest) error {
	if agentEnabled(g) && (g.Paused || time.Since(g.StartedAt) < s.opts.AgentStartDelay) {
		return errInternal("QEMU guest agent is not running")
	}
	return nil
}

// ignoresPowerButton reports whether a guest without an agent never sees the ACPI power
// button: PVE passes acpi: 0 to QEMU as -no-acpi.
func ignoresPowerButton(g *guest) bool {
	return !agentEnabled(g) && g.Config["acpi"] == "0"
}

// handleQemuReboot refuses a stopped VM synchronously. The qmreboot task ends with the VM
// stopped; qmeventd then runs a separate qmstart task that brings it up with pending applied.
func handleQemuReboot(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	if !g.running() {
		return nil, errInternal("VM %d not running", g.VMID)
	}
	if g.Paused {
		return nil, errInternal("VM is paused - cannot shutdown")
	}
	return s.vmTask(r, "qmreboot", func(g *guest) error { return checkLock(g, r) }, func(g *guest, _ *task) error {
		s.powerOff(g)
		s.startTaskAs("root@pam", "", taskDef{Type: "qmstart", ID: strconv.Itoa(g.VMID), Node: g.Node,
			Finish: func(*task) error {
				cur, ok := s.st.guests[g.VMID]
				if !ok || cur != g {
					return errNoConfig(KindQemu, g.Node, g.VMID)
				}
				if !g.running() {
					s.powerOn(g)
				}
				return nil
			}})
		return nil
	})
}

func handleQemuReset(s *Server, r *request) (any, error) {
	return s.vmTask(r, "qmreset", func(g *guest) error { return checkLock(g, r) }, func(g *guest, _ *task) error {
		if !g.running() {
			return errInternal("VM %d not running", g.VMID)
		}
		return nil
	})
}

func handleQemuSuspend(s *Server, r *request) (any, error) {
	typ := "qmpause"
	if r.bool("todisk") {
		typ = "qmsuspend"
	}
	return s.vmTask(r, typ, func(g *guest) error { return checkLock(g, r) }, func(g *guest, _ *task) error {
		if !g.running() {
			return errInternal("VM %d not running", g.VMID)
		}
		if r.bool("todisk") {
			s.powerOff(g)
			g.Config["lock"] = "suspended"
			s.touch(g)
			return nil
		}
		g.Paused = true
		s.touch(g)
		return nil
	})
}

func handleQemuResume(s *Server, r *request) (any, error) {
	return s.vmTask(r, "qmresume", nil, func(g *guest, _ *task) error {
		if g.lock() == "suspended" {
			delete(g.Config, "lock")
			s.powerOn(g)
			return nil
		}
		if !g.running() {
			return errInternal("VM %d not running", g.VMID)
		}
		g.Paused = false
		s.touch(g)
		return nil
	})
}
