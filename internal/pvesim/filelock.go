package pvesim

import (
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// PVE has two kinds of lock on a guest. The lock property in its config ("lock: clone")
// makes other writers fail at once ("VM is locked (clone)", see checkLock). The config
// file lock (flock on /var/lock/qemu-server/lock-<vmid>.conf, or for a container
// /run/lock/lxc/pve-config-<vmid>.lock) serialises writers: most hold it for an instant,
// but a create holds it on the new VMID for the whole task, and so does a QEMU clone on
// its target (exclusive) and its source (shared); a container clone marks its source with
// the lock property "disk" instead and takes the target's file lock only step by step. A
// writer that finds it held waits, then gives up with "can't lock file ... - got timeout".

// defaultConfigLockTimeout is how long lock_config waits for a held config file lock.
const defaultConfigLockTimeout = 10 * time.Second

// fileLock is a held config file lock. Its holders are tasks: the one create or clone
// writing a new VMID (exclusively: nothing else can hold a VMID being made), or the clones
// reading a source (shared with each other). A writer waits for none to be left.
type fileLock struct {
	holders int
	// freed is closed when the last holder lets go.
	freed chan struct{}
}

// errStepWaits is returned by a task step that continues on its own (a worker waiting for
// a config file lock): the task keeps running until that continuation ends it.
var errStepWaits = errors.New("the task step continues on its own")

// holdFileLock takes vmid's config file lock for a task until it ends.
func (s *Server) holdFileLock(t *task, vmid int) {
	fl := s.st.fileLocks[vmid]
	if fl == nil {
		fl = &fileLock{freed: make(chan struct{})}
		s.st.fileLocks[vmid] = fl
	}
	fl.holders++
	t.releases = append(t.releases, func() { s.releaseFileLock(vmid, fl) })
}

func (s *Server) releaseFileLock(vmid int, fl *fileLock) {
	if s.st.fileLocks[vmid] != fl {
		return // dropped by a reset
	}
	fl.holders--
	if fl.holders > 0 {
		return
	}
	close(fl.freed)
	delete(s.st.fileLocks, vmid)
}

// dropFileLocks lets go of every config file lock (a reset drops the tasks holding them),
// waking their waiters.
func (st *state) dropFileLocks() {
	for _, fl := range st.fileLocks {
		close(fl.freed)
	}
	st.fileLocks = map[int]*fileLock{}
}

// configLockFile is the file lock_config flocks: qemu-server's and pve-container's
// config_file_lock.
func configLockFile(kind string, vmid int) string {
	if kind == KindLXC {
		return fmt.Sprintf("/run/lock/lxc/pve-config-%d.lock", vmid)
	}
	return fmt.Sprintf("/var/lock/qemu-server/lock-%d.conf", vmid)
}

// awaitFileLock waits, with the state lock released, until nobody holds the config file
// lock of the guest (of kind) vmid, at most the configured timeout; it returns with the
// state lock held and the error lock_config gives up with.
func (s *Server) awaitFileLock(kind string, vmid int) error {
	deadline := time.Now().Add(s.configLockTimeout())
	for {
		fl := s.st.fileLocks[vmid]
		if fl == nil {
			return nil
		}
		wait := time.Until(deadline)
		if wait <= 0 || s.closed {
			return errInternal("can't lock file '%s' - got timeout", configLockFile(kind, vmid))
		}
		timer := time.NewTimer(wait)
		s.mu.Unlock()
		select {
		case <-fl.freed:
		case <-timer.C:
		case <-s.stopCh:
		}
		timer.Stop()
		s.mu.Lock()
	}
}

// withFileLockInWorker runs a worker's work under vmid's config file lock: at once when it
// is free, else from a goroutine that waits for it and then ends the task (errStepWaits).
func (s *Server) withFileLockInWorker(t *task, kind string, vmid int, work func() error) error {
	if s.st.fileLocks[vmid] == nil {
		return work()
	}
	go func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		err := s.awaitFileLock(kind, vmid)
		if s.closed || t.Status != "running" {
			return
		}
		if err == nil {
			err = work()
		}
		s.endTask(t, err)
	}()
	return errStepWaits
}

func (s *Server) configLockTimeout() time.Duration {
	if s.opts.ConfigLockTimeout > 0 {
		return s.opts.ConfigLockTimeout
	}
	return defaultConfigLockTimeout
}
