package pvesim

import (
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Faults replaces the set of injected faults.
type Faults struct {
	// Seed, when not 0, restarts the simulator's randomness from it before the rules
	// apply, so the same seed draws the same hits (see Server.Seed).
	Seed  uint64      `json:"seed,omitempty"`
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
	// LatencyRate in (0,1] delays only that fraction of the matching requests; 0 delays all.
	LatencyRate float64 `json:"latencyRate,omitempty"`
	// TaskFailureRate in [0,1] makes tasks started by the request fail with TaskFailureMessage.
	TaskFailureRate    float64 `json:"taskFailureRate,omitempty"`
	TaskFailureMessage string  `json:"taskFailureMessage,omitempty"`
}

type pendingDrop struct {
	method  string
	pattern string
	re      *regexp.Regexp
}

// checkPattern reports a pattern that could never match as a 400, so that a typo in a
// test's fault set fails loudly instead of silently injecting nothing.
func checkPattern(pattern string) error {
	var err error
	if strings.HasPrefix(pattern, "^") {
		_, err = regexp.Compile(pattern)
	} else {
		_, err = path.Match(strings.TrimPrefix(pattern, "/api2/json"), "/")
	}
	if err != nil {
		return errf(http.StatusBadRequest, "invalid path pattern %q: %s", pattern, err.Error())
	}
	return nil
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
		re = regexp.MustCompile(`$.^`) //nolint:gocritic // badRegexp: a pattern that never matches, on purpose
	}
	return pattern, re
}

type faultSet struct {
	dice  *dice
	mu    sync.Mutex
	rules []compiledRule
	drops []pendingDrop
	holds holdSet
}

type compiledRule struct {
	FaultRule
	re *regexp.Regexp
}

func newFaultSet(d *dice) *faultSet { return &faultSet{dice: d} }

func (fs *faultSet) set(f Faults) error {
	rules := make([]compiledRule, 0, len(f.Rules))
	for _, r := range f.Rules {
		if err := checkPattern(r.PathPattern); err != nil {
			return err
		}
		cr := compiledRule{FaultRule: r}
		cr.PathPattern, cr.re = compilePattern(r.PathPattern)
		rules = append(rules, cr)
	}
	if f.Seed != 0 {
		fs.dice.reseed(f.Seed)
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
		if r.LatencyRate == 0 || fs.dice.hit(r.LatencyRate) {
			fx.latency = r.Latency
		}
		if r.ErrorRate > 0 && fs.dice.hit(r.ErrorRate) {
			fx.err = faultError(r.FaultRule)
		}
		if r.TaskFailureRate > 0 && fs.dice.hit(r.TaskFailureRate) {
			fx.taskFault = r.TaskFailureMessage
			if fx.taskFault == "" {
				fx.taskFault = "simulated task failure"
			}
		}
		break
	}
	fx.hold = fs.holds.take(method, reqPath)
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

func (fs *faultSet) addDrop(method, pattern string) {
	pattern, re := compilePattern(pattern)
	fs.mu.Lock()
	fs.drops = append(fs.drops, pendingDrop{method: method, pattern: pattern, re: re})
	fs.mu.Unlock()
}

// clear removes every fault and releases every hold, so no response stays parked.
func (fs *faultSet) clear() {
	fs.mu.Lock()
	fs.rules, fs.drops = nil, nil
	fs.mu.Unlock()
	fs.holds.forgetAll()
}

// SetFaults replaces the injected faults; an invalid pattern is ignored with its rule set.
func (s *Server) SetFaults(f Faults) { _ = s.faults.set(f) }

// DropAfterApply arms a one-shot drop: the next matching request is applied, then the
// connection is closed without an answer.
func (s *Server) DropAfterApply(method, pathPattern string) { s.faults.addDrop(method, pathPattern) }
