package pvesim

import (
	"math/rand/v2"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Faults replaces the set of injected faults.
type Faults struct {
	Rules []FaultRule `json:"rules"`
}

// FaultRule injects failures into requests that match Method (empty: any) and
// PathPattern. A PathPattern starting with "^" is a regular expression; any other is a
// path.Match pattern ("/nodes/*/qemu/*/config"; '*' does not cross '/'); empty matches
// every path. Patterns see the path below /api2/json (a leading "/api2/json" is ignored).
// The first matching rule applies.
type FaultRule struct {
	Method      string `json:"method,omitempty"`
	PathPattern string `json:"pathPattern,omitempty"`
	// ErrorRate in [0,1] answers with Status (default 500) and Message without applying the request.
	ErrorRate float64 `json:"errorRate,omitempty"`
	Status    int     `json:"status,omitempty"`
	Message   string  `json:"message,omitempty"`
	// Latency delays the request before it is handled.
	Latency time.Duration `json:"latency,omitempty"`
	// TaskFailureRate in [0,1] makes tasks started by the request fail with TaskFailureMessage.
	TaskFailureRate    float64 `json:"taskFailureRate,omitempty"`
	TaskFailureMessage string  `json:"taskFailureMessage,omitempty"`
}

// Hold is a one-shot fault: the next matching request is applied, then its response waits
// until Release (or until the server closes).
type Hold struct {
	held     chan struct{}
	release  chan struct{}
	heldOnce sync.Once
	relOnce  sync.Once
}

func newHold() *Hold { return &Hold{held: make(chan struct{}), release: make(chan struct{})} }

// Held is closed once a request has been applied and its response is being held.
func (h *Hold) Held() <-chan struct{} { return h.held }

// Release sends the held response (or lets the next match through unheld).
func (h *Hold) Release() { h.relOnce.Do(func() { close(h.release) }) }

func (h *Hold) park(stop <-chan struct{}) {
	h.heldOnce.Do(func() { close(h.held) })
	select {
	case <-h.release:
	case <-stop:
	}
}

type pendingHold struct {
	method  string
	pattern string
	re      *regexp.Regexp
	hold    *Hold
}

type pendingDrop struct {
	method  string
	pattern string
	re      *regexp.Regexp
}

// compilePattern compiles a "^" pattern once, so matching costs no compile per request;
// an invalid expression matches nothing.
func compilePattern(pattern string) (string, *regexp.Regexp) {
	pattern = strings.TrimPrefix(pattern, "/api2/json")
	if !strings.HasPrefix(pattern, "^") {
		return pattern, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		re = regexp.MustCompile(`$.^`)
	}
	return pattern, re
}

type faultSet struct {
	mu    sync.Mutex
	rules []compiledRule
	holds []pendingHold
	drops []pendingDrop
	all   []*Hold
}

type compiledRule struct {
	FaultRule
	re *regexp.Regexp
}

func newFaultSet() *faultSet { return &faultSet{} }

func (fs *faultSet) set(f Faults) error {
	rules := make([]compiledRule, 0, len(f.Rules))
	for _, r := range f.Rules {
		cr := compiledRule{FaultRule: r}
		cr.PathPattern = strings.TrimPrefix(r.PathPattern, "/api2/json")
		if strings.HasPrefix(r.PathPattern, "^") {
			re, err := regexp.Compile(r.PathPattern)
			if err != nil {
				return errf(http.StatusBadRequest, "invalid path pattern %q: %s", r.PathPattern, err.Error())
			}
			cr.re = re
		} else if _, err := path.Match(cr.PathPattern, "/"); err != nil {
			return errf(http.StatusBadRequest, "invalid path pattern %q: %s", r.PathPattern, err.Error())
		}
		rules = append(rules, cr)
	}
	fs.mu.Lock()
	fs.rules = rules
	fs.mu.Unlock()
	return nil
}

func patternMatches(method, pattern string, re *regexp.Regexp, reqMethod, reqPath string) bool {
	if method != "" && !strings.EqualFold(method, reqMethod) {
		return false
	}
	if re != nil {
		return re.MatchString(reqPath)
	}
	pattern = strings.TrimPrefix(pattern, "/api2/json")
	if pattern == "" {
		return true
	}
	ok, _ := path.Match(pattern, reqPath)
	return ok
}

// faultEffect is what the matching faults do to one request.
type faultEffect struct {
	latency   time.Duration
	err       *apiError
	taskFault string
	hold      *Hold
	drop      bool
}

func (fs *faultSet) match(method, reqPath string) faultEffect {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var fx faultEffect
	for _, r := range fs.rules {
		if !patternMatches(r.Method, r.PathPattern, r.re, method, reqPath) {
			continue
		}
		fx.latency = r.Latency
		if r.ErrorRate > 0 && rand.Float64() < r.ErrorRate {
			fx.err = faultError(r.FaultRule)
		}
		if r.TaskFailureRate > 0 && rand.Float64() < r.TaskFailureRate {
			fx.taskFault = r.TaskFailureMessage
			if fx.taskFault == "" {
				fx.taskFault = "simulated task failure"
			}
		}
		break
	}
	for i, h := range fs.holds {
		if patternMatches(h.method, h.pattern, h.re, method, reqPath) {
			fx.hold = h.hold
			fs.holds = append(fs.holds[:i:i], fs.holds[i+1:]...)
			break
		}
	}
	for i, d := range fs.drops {
		if patternMatches(d.method, d.pattern, d.re, method, reqPath) {
			fx.drop = true
			fs.drops = append(fs.drops[:i:i], fs.drops[i+1:]...)
			break
		}
	}
	return fx
}

func faultError(r FaultRule) *apiError {
	status := r.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	msg := r.Message
	if msg == "" {
		msg = "simulated fault"
	}
	return errf(status, "%s", msg)
}

func (fs *faultSet) addHold(method, pattern string) *Hold {
	h := newHold()
	pattern, re := compilePattern(pattern)
	fs.mu.Lock()
	fs.holds = append(fs.holds, pendingHold{method: method, pattern: pattern, re: re, hold: h})
	fs.all = append(fs.all, h)
	fs.mu.Unlock()
	return h
}

func (fs *faultSet) addDrop(method, pattern string) {
	pattern, re := compilePattern(pattern)
	fs.mu.Lock()
	fs.drops = append(fs.drops, pendingDrop{method: method, pattern: pattern, re: re})
	fs.mu.Unlock()
}

func (fs *faultSet) clear() {
	fs.mu.Lock()
	fs.rules, fs.holds, fs.drops = nil, nil, nil
	all := fs.all
	fs.all = nil
	fs.mu.Unlock()
	for _, h := range all {
		h.Release()
	}
}

func (fs *faultSet) releaseAll() { fs.clear() }

// SetFaults replaces the injected faults; an invalid pattern is ignored with its rule set.
func (s *Server) SetFaults(f Faults) { _ = s.faults.set(f) }

// HoldResponse arms a one-shot hold: the next request matching method and pathPattern
// (FaultRule syntax) is applied, then its response waits for Hold.Release.
func (s *Server) HoldResponse(method, pathPattern string) *Hold {
	return s.faults.addHold(method, pathPattern)
}

// DropAfterApply arms a one-shot drop: the next matching request is applied, then the
// connection is closed without an answer.
func (s *Server) DropAfterApply(method, pathPattern string) { s.faults.addDrop(method, pathPattern) }
