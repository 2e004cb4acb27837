package proxmox

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	proxmox "github.com/luthermonson/go-proxmox"
)

// UPID is PVE's task id: UPID:node:pid:pstart:starttime:type:id:user: (with a
// trailing colon). We parse it ourselves because go-proxmox's NewTask panics
// on some malformed ids.
type UPID struct {
	Raw       string
	Node      string
	PStart    uint64 // the worker's process start, in clock ticks since the node booted
	StartTime int64  // Unix seconds
	Type      string
	ID        string
	User      string
}

// ParseUPID splits a UPID into the parts the provider needs.
func ParseUPID(raw string) (UPID, error) {
	parts := strings.Split(raw, ":")
	if len(parts) < 8 || parts[0] != "UPID" || parts[1] == "" {
		return UPID{}, errors.Errorf("malformed task id %q", raw)
	}
	pstart, err := strconv.ParseUint(parts[3], 16, 64)
	if err != nil {
		return UPID{}, errors.Errorf("malformed task id %q: process start %q", raw, parts[3])
	}
	start, err := strconv.ParseInt(parts[4], 16, 64)
	if err != nil {
		return UPID{}, errors.Errorf("malformed task id %q: start time %q", raw, parts[4])
	}
	return UPID{Raw: raw, Node: parts[1], PStart: pstart, StartTime: start, Type: parts[5], ID: parts[6], User: parts[7]}, nil
}

// TaskStatus is one task as PVE reports it (status call or task list).
type TaskStatus struct {
	UPID       string
	Node       string
	Type       string
	ID         string
	User       string
	Running    bool
	ExitStatus string
	StartTime  int64
	EndTime    int64
}

// Finished reports whether the task stopped.
func (t TaskStatus) Finished() bool { return !t.Running }

// Succeeded reports whether the task stopped without error. PVE's
// "WARNINGS: n" exit status counts as success.
func (t TaskStatus) Succeeded() bool {
	return !t.Running && ExitStatusOK(t.ExitStatus)
}

// ExitStatusOK reports whether a stopped task's exit status means success:
// "OK", or PVE's "WARNINGS: n".
func ExitStatusOK(exit string) bool {
	return exit == "OK" || strings.HasPrefix(exit, "WARNINGS")
}

// ForcedStop returns the line of a QEMU shutdown task's log saying PVE
// stopped the guest hard ("VM still running - terminating now with SIGTERM"
// after the timeout, "VM quit/powerdown failed - terminating now with
// SIGTERM" when the powerdown command failed, "... with SIGKILL" when even
// that did not stop it: qemu-server src/PVE/QemuServer.pm, _do_vm_stop), or
// "". The log is the only place that says so: _do_vm_stop warns with a plain
// Perl warn, which is no TASK WARNINGS, and the task ends OK.
func ForcedStop(log []string) string {
	for _, l := range log {
		if strings.Contains(l, " - terminating now with SIG") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// Failed reports whether the task stopped with an error; ExitStatus holds
// PVE's message then.
func (t TaskStatus) Failed() bool { return !t.Running && !t.Succeeded() }

type wireTask struct {
	UPID       wireText `json:"upid"`
	Node       wireText `json:"node"`
	Type       wireText `json:"type"`
	ID         wireText `json:"id"`
	User       wireText `json:"user"`
	TokenID    wireText `json:"tokenid"`
	Status     wireText `json:"status"`
	ExitStatus wireText `json:"exitstatus"`
	StartTime  wireInt  `json:"starttime"`
	EndTime    wireInt  `json:"endtime"`
}

// statusCall interprets the /tasks/{upid}/status shape, where status is
// running|stopped and exitstatus carries the result.
func (w wireTask) statusCall() TaskStatus {
	return TaskStatus{
		UPID: string(w.UPID), Node: string(w.Node), Type: string(w.Type), ID: string(w.ID), User: string(w.User),
		Running:    string(w.Status) == "running",
		ExitStatus: string(w.ExitStatus),
		StartTime:  int64(w.StartTime), EndTime: int64(w.EndTime),
	}
}

// listEntry interprets the task list shape, where status is the exit status
// of a finished task and absent (or "running") for an active one.
func (w wireTask) listEntry() TaskStatus {
	st := string(w.Status)
	running := st == "" || st == "running"
	if w.EndTime > 0 && st != "" && st != "running" {
		running = false
	}
	return TaskStatus{
		UPID: string(w.UPID), Node: string(w.Node), Type: string(w.Type), ID: string(w.ID), User: string(w.User),
		Running: running, ExitStatus: st,
		StartTime: int64(w.StartTime), EndTime: int64(w.EndTime),
	}
}

// errMalformedUPID marks a task id that cannot be PVE's.
var errMalformedUPID = errors.New("malformed task id")

// IsTaskUnknown reports whether err says PVE has no such task (it answers
// 400 with errors.upid "no such task", or "unable to parse worker upid"), or
// the id cannot be a task's: such a task is not running. A network error or
// timeout is not an answer about the task and returns false.
func IsTaskUnknown(err error) bool {
	if errors.Is(err, errMalformedUPID) {
		return true
	}
	apiErr, ok := proxmox.AsAPIError(err)
	if !ok || apiErr.StatusCode != http.StatusBadRequest {
		return false
	}
	for _, text := range append([]string{apiErr.Message}, mapValues(apiErr.Errors)...) {
		if strings.Contains(text, "no such task") || strings.Contains(text, "unable to parse worker upid") {
			return true
		}
	}
	return false
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TaskStatus reads the state of one task. The node is taken from the UPID.
func (c *Client) TaskStatus(ctx context.Context, upid string) (TaskStatus, error) {
	u, err := ParseUPID(upid)
	if err != nil {
		return TaskStatus{}, errors.Wrap(errMalformedUPID, err.Error())
	}
	var raw json.RawMessage
	p := "/nodes/" + url.PathEscape(u.Node) + "/tasks/" + url.PathEscape(upid) + "/status"
	if err := c.API().Get(ctx, p, &raw); err != nil {
		if IsTaskUnknown(err) {
			// Its end will never be seen: nothing to measure.
			c.tasks.finish(upid)
		}
		return TaskStatus{}, errors.Wrapf(err, "cannot read task %s", upid)
	}
	var w wireTask
	if err := json.Unmarshal(raw, &w); err != nil {
		return TaskStatus{}, errors.Wrapf(err, "cannot decode task %s", upid)
	}
	ts := w.statusCall()
	ts.ExitStatus = c.scrub(ts.ExitStatus)
	if ts.UPID == "" {
		ts.UPID = upid
	}
	if ts.Node == "" {
		ts.Node = u.Node
	}
	if ts.Finished() {
		c.observeFinished(upid, ts.Failed(), ts.ExitStatus)
	}
	return ts, nil
}

// maxTaskLogLines bounds how much of a task's log TaskLog reads: its end,
// where a failure's cause and the final TASK line are.
const maxTaskLogLines = 500

// taskLogLine is one entry of PVE's task log answer: its text (n, its
// number from 1, is not needed).
type taskLogLine struct {
	T wireText `json:"t"`
}

// TaskLog reads the last maxTaskLogLines lines of a task's log in order,
// scrubbed of the client's secrets; a finished task's last line is "TASK OK"
// or "TASK ERROR: <exit status>". PVE's read_task_log (pve-manager
// PVE/API2/Tasks.pm, over pve-common Tools.pm dump_logfile) answers lines
// from start, at most limit of them (limit=0: to the end), with the log's
// line count as "total" beside data, which go-proxmox drops. So a log longer
// than one page is measured instead: a line past the end reads as nothing,
// and the log's length is found by doubling then halving start (a few
// one-line reads), then its end read as one page.
func (c *Client) TaskLog(ctx context.Context, upid string) ([]string, error) {
	u, err := ParseUPID(upid)
	if err != nil {
		return nil, errors.Wrap(errMalformedUPID, err.Error())
	}
	page, err := c.taskLogPage(ctx, u, 0, maxTaskLogLines)
	if err != nil || len(page) < maxTaskLogLines {
		return page, err
	}
	n, err := c.taskLogLength(ctx, u, maxTaskLogLines)
	if err != nil {
		return nil, err
	}
	return c.taskLogPage(ctx, u, n-maxTaskLogLines, maxTaskLogLines)
}

// taskLogLength finds how many lines a task's log holds, knowing it holds at
// least known (> 0): the last start from which a one-line read finds a line,
// plus one.
func (c *Client) taskLogLength(ctx context.Context, u UPID, known int) (int, error) {
	has := func(line int) (bool, error) {
		page, err := c.taskLogPage(ctx, u, line, 1)
		return len(page) > 0, err
	}
	lo, hi := known, 2*known // line lo-1 exists; find a line hi-1 that does not
	for {
		ok, err := has(hi - 1)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := has(mid - 1)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// taskLogPage reads at most limit (> 0) lines of a task's log from line
// start (0-based).
func (c *Client) taskLogPage(ctx context.Context, u UPID, start, limit int) ([]string, error) {
	var raw []taskLogLine
	p := "/nodes/" + url.PathEscape(u.Node) + "/tasks/" + url.PathEscape(u.Raw) + "/log?start=" + strconv.Itoa(start) + "&limit=" + strconv.Itoa(limit)
	if err := c.API().Get(ctx, p, &raw); err != nil {
		return nil, errors.Wrapf(err, "cannot read the log of task %s", u.Raw)
	}
	lines := make([]string, 0, len(raw))
	for _, l := range raw {
		lines = append(lines, c.scrub(string(l.T)))
	}
	return lines, nil
}

// GuestTasks lists the tasks PVE recorded on node for vmid, newest first,
// active and finished (source=all), at most limit entries.
func (c *Client) GuestTasks(ctx context.Context, node string, vmid, limit int) ([]TaskStatus, error) {
	q := url.Values{}
	q.Set("vmid", strconv.Itoa(vmid))
	q.Set("source", "all")
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var raw []wireTask
	p := "/nodes/" + url.PathEscape(node) + "/tasks?" + q.Encode()
	if err := c.API().Get(ctx, p, &raw); err != nil {
		return nil, errors.Wrapf(err, "cannot list tasks of guest %d on node %s", vmid, node)
	}
	out := make([]TaskStatus, 0, len(raw))
	for _, w := range raw {
		out = append(out, w.listEntry())
	}
	return out, nil
}

// startedTask decodes the UPID a call that starts a task answered, and
// remembers when the task started so its duration can be measured.
func (c *Client) startedTask(raw json.RawMessage) (string, error) {
	upid, err := decodeUPID(raw)
	if err != nil || upid == "" || c.metrics == nil {
		return upid, err
	}
	if u, err := ParseUPID(upid); err == nil {
		c.tasks.start(upid, u.Type, time.Now())
	}
	return upid, nil
}

// observeFinished measures a task this client started, the first time it
// is seen finished.
func (c *Client) observeFinished(upid string, failed bool, exitStatus string) {
	if st, ok := c.tasks.finish(upid); ok {
		c.metrics.ObserveTask(st.taskType, time.Since(st.at), failed, exitStatus)
	}
}

// maxTrackedTasks bounds the tasks a client remembers having started: a
// task is forgotten once this many later ones were started, so tasks nobody
// follows to their end (a destroyed guest's) do not accumulate.
const maxTrackedTasks = 1024

// taskClock remembers when this client started each task, so the task's
// duration is measured on the provider's clock when it is first seen
// finished: PVE's task status has no end time, and its start time is the
// node's clock. A finished task is forgotten, so reading it again (a
// reconcile whose status update conflicted) does not count it twice. Tasks
// started by an earlier client of the connection (before a rotation or a
// restart) are not measured.
type taskClock struct {
	mu      sync.Mutex
	started map[string]startedTask
	order   []string // UPIDs, oldest first; may hold finished ones
}

type startedTask struct {
	taskType string
	at       time.Time
}

func newTaskClock() *taskClock {
	return &taskClock{started: map[string]startedTask{}}
}

func (t *taskClock) start(upid, taskType string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started[upid] = startedTask{taskType: taskType, at: at}
	t.order = append(t.order, upid)
	for len(t.order) > maxTrackedTasks {
		delete(t.started, t.order[0])
		t.order = t.order[1:]
	}
}

// finish forgets upid and returns when it started, if it was remembered.
func (t *taskClock) finish(upid string) (startedTask, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, ok := t.started[upid]
	delete(t.started, upid)
	return st, ok
}
