package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A node's tasks under /nodes/{node}/tasks as pve-manager serves them (PVE/API2/Tasks.pm):
// the list, one task's status and log, and stopping it. The tasks themselves run in task_worker.go.

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
