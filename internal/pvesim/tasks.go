package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

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

// pUPID is a task's UPID in a task route's path.
func pUPID() ParamSpec { return pString("upid").req() }

var reUPID = regexp.MustCompile(`^UPID:([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s]+):([^:\s/]*):([^:\s]+):$`)

// findTask resolves a UPID as PVE does: malformed and unknown ones are parameter errors.
func (s *Server) findTask(upid string) (*task, error) {
	if !reUPID.MatchString(upid) {
		return nil, errParam("upid", "unable to parse worker upid")
	}
	t, ok := s.st.tasks[upid]
	if !ok {
		return nil, errParam("upid", "no such task")
	}
	return t, nil
}

// splitTaskUser splits "root@pam!tok" into user and token id.
func splitTaskUser(u string) (string, string) {
	user, tok, _ := strings.Cut(u, "!")
	return user, tok
}

func (t *task) baseFields() map[string]any {
	user, tok := splitTaskUser(t.User)
	m := map[string]any{
		"upid": t.UPID, "node": t.Node, "pid": t.PID, "pstart": t.PStart, "starttime": t.StartTime,
		"type": t.Type, "id": t.ID, "user": user,
	}
	if tok != "" {
		m["tokenid"] = tok
	}
	return m
}

func handleTaskStatus(s *Server, r *request) (any, error) {
	if err := s.checkNode(r.node()); err != nil {
		return nil, err
	}
	t, err := s.findTask(r.str("upid"))
	if err != nil {
		return nil, err
	}
	m := t.baseFields()
	m["status"] = t.Status
	if t.Status == "stopped" {
		m["exitstatus"] = t.ExitStatus
	}
	return m, nil
}

// handleTaskLog follows pve-manager's read_task_log (PVE/API2/Tasks.pm) over pve-common's
// dump_logfile (src/PVE/Tools.pm): lines from start, at most limit of them (default 50; 0
// reads to the end), and total, the number of lines the log holds whatever was asked for.
// An empty log reads as the one line "no content" (dump_logfile's ExtJS workaround).
func handleTaskLog(s *Server, r *request) (any, error) {
	if err := s.checkNode(r.node()); err != nil {
		return nil, err
	}
	t, err := s.findTask(r.str("upid"))
	if err != nil {
		return nil, err
	}
	start, limit := 0, 50
	if r.has("start") {
		start = r.int("start")
	}
	if r.has("limit") {
		limit = r.int("limit")
	}
	if len(t.Log) == 0 {
		return withTotal{data: []map[string]any{{"n": 1, "t": "no content"}}, total: 1}, nil
	}
	out := []map[string]any{}
	for i := start; i < len(t.Log) && (limit == 0 || len(out) < limit); i++ {
		out = append(out, map[string]any{"n": i + 1, "t": t.Log[i]})
	}
	return withTotal{data: out, total: len(t.Log)}, nil
}

// AppendTaskLog adds lines to a task's log, before its final TASK line when it has ended:
// tests of log readers need logs longer than the simulated workers write (a real download's
// progress runs to thousands of lines).
func (s *Server) AppendTaskLog(upid string, lines ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.findTask(upid)
	if err != nil {
		return err
	}
	if t.Status == "running" {
		t.Log = append(t.Log, lines...)
		return nil
	}
	last := len(t.Log) - 1
	t.Log = append(append(append([]string{}, t.Log[:last]...), lines...), t.Log[last])
	return nil
}

func handleTaskStop(s *Server, r *request) (any, error) {
	if err := s.checkNode(r.node()); err != nil {
		return nil, err
	}
	t, err := s.findTask(r.str("upid"))
	if err != nil {
		return nil, err
	}
	if t.Status == "running" {
		if t.timer != nil {
			t.timer.Stop()
		}
		s.endTask(t, fmt.Errorf("unexpected status"))
	}
	return nil, nil
}

func handleTaskList(s *Server, r *request) (any, error) {
	node := r.node()
	if err := s.checkNode(node); err != nil {
		return nil, err
	}
	f := taskFilterFrom(r)
	list := s.st.taskLog[node]
	out := []map[string]any{}
	skipped := 0
	for i := len(list) - 1; i >= 0 && len(out) < f.limit; i-- {
		t := list[i]
		if !f.matches(t) {
			continue
		}
		if skipped < f.start {
			skipped++
			continue
		}
		m := t.baseFields()
		if t.Status == "stopped" {
			m["endtime"] = t.EndTime
			m["status"] = t.ExitStatus
		}
		out = append(out, m)
	}
	return out, nil
}

type taskFilter struct {
	source     string
	vmid       string
	typeFilter string
	userFilter string
	errorsOnly bool
	since      int64
	until      int64
	start      int
	limit      int
}

func taskFilterFrom(r *request) taskFilter {
	f := taskFilter{source: "archive", limit: 50, vmid: r.str("vmid"), typeFilter: r.str("typefilter"),
		userFilter: r.str("userfilter"), errorsOnly: r.bool("errors")}
	if r.has("source") {
		f.source = r.str("source")
	}
	if r.has("limit") {
		f.limit = r.int("limit")
	}
	if r.has("start") {
		f.start = r.int("start")
	}
	if r.has("since") {
		f.since, _ = strconv.ParseInt(r.str("since"), 10, 64)
	}
	if r.has("until") {
		f.until, _ = strconv.ParseInt(r.str("until"), 10, 64)
	}
	return f
}

func (f taskFilter) matches(t *task) bool {
	switch {
	case f.source == "archive" && t.Status != "stopped",
		f.source == "active" && t.Status != "running",
		f.vmid != "" && t.ID != f.vmid,
		f.typeFilter != "" && t.Type != f.typeFilter,
		f.userFilter != "" && !strings.Contains(t.User, f.userFilter),
		f.errorsOnly && (t.Status != "stopped" || t.ExitStatus == "OK" || strings.HasPrefix(t.ExitStatus, "WARNINGS")),
		f.since > 0 && t.StartTime < f.since,
		f.until > 0 && t.StartTime > f.until:
		return false
	}
	return true
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
