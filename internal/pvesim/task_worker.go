package pvesim

import (
	"fmt"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Worker tasks: an asynchronous call answers with a UPID at once and its work runs as
// steps on timers, ending with PVE's last log line ("TASK OK" or the error).

// task is one PVE worker task.
type task struct {
	UPID      string
	Node      string
	PID       int
	PStart    int
	StartTime int64
	Type      string
	ID        string
	// User is the full task user: "root@pam" or "root@pam!tokenid".
	User       string
	Status     string // "running" | "stopped"
	ExitStatus string
	EndTime    int64
	Log        []string

	timer  *time.Timer
	onFail func()
	// releases let go of the config file locks the task holds, when it ends.
	releases []func()
}

// taskDef describes the work of a task. Begin runs when the worker starts, Finish when its
// duration has passed; both run under the state lock. An error from either fails the task
// with that text, after OnFail has cleaned up.
type taskDef struct {
	Type   string
	ID     string
	Node   string
	Begin  func(t *task) error
	Finish func(t *task) error
	OnFail func()
	// AtLeast, when longer than the task type's configured duration, is how long the task
	// runs (a shutdown that waits out its timeout).
	AtLeast time.Duration
	// FileLocks are the VMIDs whose config file lock the worker holds from its fork to its
	// end (a worker that runs wholly inside lock_config, as a create does).
	FileLocks []int
}

// maxTaskHistory bounds each node's finished-task history.
const maxTaskHistory = 5000

// maxBeginDelay bounds how long a worker takes to start; PVE forks within milliseconds.
const maxBeginDelay = 100 * time.Millisecond

func (t *task) logf(format string, args ...any) { t.Log = append(t.Log, fmt.Sprintf(format, args...)) }

// taskUser is the UPID user of a request: "user@realm" or "user@realm!token".
func (r *request) taskUser() string {
	if r.cred.TokenID != "" {
		return r.cred.TokenID
	}
	if r.cred.User != "" {
		return r.cred.User
	}
	return "root@pam"
}

// startTask registers a task and runs it: at once when its duration is zero, else on timers.
// It must be called with the state lock held and returns the UPID.
func (s *Server) startTask(r *request, def taskDef) string {
	user := "root@pam"
	fault := ""
	if r != nil {
		user, fault = r.taskUser(), r.taskFault
	}
	return s.startTaskAs(user, fault, def)
}

func (s *Server) startTaskAs(user, fault string, def taskDef) string {
	st := s.st
	st.pidSeq++
	now := time.Now()
	t := &task{
		Node:      def.Node,
		PID:       0x1000 + st.pidSeq,
		PStart:    0x100000 + st.pidSeq*7,
		StartTime: now.Unix(),
		Type:      def.Type,
		ID:        def.ID,
		User:      user,
		Status:    "running",
		onFail:    def.OnFail,
	}
	t.UPID = fmt.Sprintf("UPID:%s:%08X:%08X:%08X:%s:%s:%s:", t.Node, t.PID, t.PStart, t.StartTime, t.Type, t.ID, t.User)
	st.tasks[t.UPID] = t
	st.taskLog[t.Node] = append(st.taskLog[t.Node], t)
	st.trimTasks(t.Node)
	for _, vmid := range def.FileLocks {
		s.holdFileLock(t, vmid)
	}
	finish := def.Finish
	if fault != "" {
		finish = func(*task) error { return fmt.Errorf("%s", fault) }
	}
	d := max(s.taskDuration(def.Type), def.AtLeast)
	if d <= 0 {
		s.runTask(t, def.Begin, finish)
		return t.UPID
	}
	begin := min(d/4, maxBeginDelay)
	t.timer = time.AfterFunc(begin, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed || t.Status != "running" {
			return
		}
		if err := callStep(def.Begin, t); err != nil {
			s.endStep(t, err)
			return
		}
		s.stepDone(t)
		t.timer = time.AfterFunc(d-begin, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.closed || t.Status != "running" {
				return
			}
			s.endStep(t, callStep(finish, t))
		})
	})
	return t.UPID
}

func (s *Server) runTask(t *task, begin, finish func(*task) error) {
	if err := callStep(begin, t); err != nil {
		s.endStep(t, err)
		return
	}
	s.endStep(t, callStep(finish, t))
}

// endStep ends the task with a step's result, unless the step continues on its own.
func (s *Server) endStep(t *task, err error) {
	if !errors.Is(err, errStepWaits) {
		s.endTask(t, err)
	}
}

func callStep(step func(*task) error, t *task) error {
	if step == nil {
		return nil
	}
	return step(t)
}

// endTask stops a task with OK or the error text, writing PVE's last log line.
func (s *Server) endTask(t *task, err error) {
	t.Status = "stopped"
	t.EndTime = time.Now().Unix()
	t.timer = nil
	// No simulated worker ends with "TASK WARNINGS: n": only $rpcenv->warn counts towards it
	// (pve-common RESTEnvironment.pm), and the workers modelled here warn with Perl's warn.
	switch {
	case err != nil:
		msg := workerErrorLine(err)
		if t.onFail != nil {
			t.onFail()
		}
		t.ExitStatus = msg
		t.logf("TASK ERROR: %s", msg)
	default:
		t.ExitStatus = "OK"
		t.logf("TASK OK")
	}
	for _, release := range t.releases {
		release()
	}
	t.releases = nil
	s.stepDone(t)
}

// stepDone records that a task step may have changed guests (not only the one it names).
func (s *Server) stepDone(*task) {
	s.res.limitsEpoch++
	s.markDirty()
}

// trimTasks drops the oldest finished tasks of a node beyond maxTaskHistory.
func (st *state) trimTasks(node string) {
	list := st.taskLog[node]
	if len(list) <= maxTaskHistory {
		return
	}
	drop := len(list) - maxTaskHistory
	kept := make([]*task, 0, maxTaskHistory)
	for _, t := range list {
		if drop > 0 && t.Status == "stopped" {
			delete(st.tasks, t.UPID)
			drop--
			continue
		}
		kept = append(kept, t)
	}
	st.taskLog[node] = kept
}

// encodeTaskText is PVE::Tools::encode_text: a task id must not carry ':' or whitespace.
func encodeTaskText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == ':' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
