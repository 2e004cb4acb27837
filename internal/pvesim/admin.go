package pvesim

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// serveAdmin serves the /_sim/ API (documented in doc.go). It needs no PVE credentials.
func (s *Server) serveAdmin(w http.ResponseWriter, hr *http.Request) {
	var (
		data any
		err  error
		// after runs once the answer is sent: taking down the listener
		// this request came through must not cut its own answer.
		after func()
	)
	p := strings.TrimSuffix(hr.URL.Path, "/")
	switch p + " " + hr.Method {
	case "/_sim/state GET":
		data = s.adminState()
	case "/_sim/reset POST":
		s.Reset()
	case "/_sim/faults PUT":
		data, err = s.adminFaults(hr)
	case "/_sim/holds GET":
		data, err = s.adminHolds(hr)
	case "/_sim/holds/release-all POST":
		data = s.faults.holds.releaseAll()
	case "/_sim/tokens PUT":
		err = s.adminTokens(hr)
	case "/_sim/users PUT":
		err = s.adminUsers(hr)
	case "/_sim/guests POST":
		err = s.adminGuests(hr)
	case "/_sim/volumes POST":
		err = s.adminVolumes(hr)
	case "/_sim/vnets POST":
		err = s.adminVNets(hr)
	case "/_sim/baseline POST":
		s.SaveBaseline()
	case "/_sim/listeners GET":
		data = s.Listeners()
	default:
		if node, ok := nodeMemoryPath(p, hr.Method); ok {
			err = s.adminNodeMemory(hr, node)
			break
		}
		if node, offline, ok := nodeSwitchPath(p, hr.Method); ok {
			err = s.adminNode(hr, node, offline)
			break
		}
		if i, up, ok := listenerSwitchPath(p, hr.Method); ok {
			after, err = s.adminListener(i, up)
			break
		}
		if id, ok := holdReleasePath(p, hr.Method); ok {
			data, err = s.faults.holds.releaseByID(id)
			break
		}
		err = errf(http.StatusNotFound, "no such admin endpoint %s %s", hr.Method, hr.URL.Path)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeData(w, data)
	if after != nil {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		after()
	}
}

// listenerSwitchPath recognises POST /_sim/listeners/{i}/down and .../up.
func listenerSwitchPath(p, method string) (int, bool, bool) {
	rest, ok := strings.CutPrefix(p, "/_sim/listeners/")
	if !ok || method != http.MethodPost {
		return 0, false, false
	}
	idx, action, ok := strings.Cut(rest, "/")
	i, err := strconv.Atoi(idx)
	if !ok || err != nil || (action != "down" && action != "up") {
		return 0, false, false
	}
	return i, action == "up", true
}

// adminListener brings listener i up now, or takes it down once the answer
// is sent (the request may have come through it).
func (s *Server) adminListener(i int, up bool) (func(), error) {
	if _, err := s.listener(i); err != nil {
		return nil, err
	}
	if up {
		return nil, s.ListenerUp(i)
	}
	return func() { _ = s.ListenerDown(i) }, nil
}

func decodeAdmin(hr *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(hr.Body, maxBodySize))
	if err != nil {
		return errf(http.StatusBadRequest, "cannot read body")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errf(http.StatusBadRequest, "invalid JSON body: %s", err.Error())
	}
	return nil
}

type adminTask struct {
	UPID       string `json:"upid"`
	Node       string `json:"node"`
	Type       string `json:"type"`
	ID         string `json:"id"`
	User       string `json:"user"`
	Status     string `json:"status"`
	ExitStatus string `json:"exitstatus,omitempty"`
}

type adminStateView struct {
	Guests   []GuestView    `json:"guests"`
	Tasks    []adminTask    `json:"tasks"`
	Locks    map[int]string `json:"locks"`
	Counters Counters       `json:"counters"`
	// Seed is the seed of the fault dice in use, for a replay.
	Seed uint64 `json:"seed"`
}

func (s *Server) adminState() adminStateView {
	v := adminStateView{Guests: s.Guests(), Locks: map[int]string{}, Counters: s.Counters(), Seed: s.Seed()}
	for _, g := range v.Guests {
		if g.Lock != "" {
			v.Locks[g.VMID] = g.Lock
		}
	}
	s.mu.Lock()
	for _, n := range s.st.nodes {
		for _, t := range s.st.taskLog[n] {
			v.Tasks = append(v.Tasks, adminTask{UPID: t.UPID, Node: t.Node, Type: t.Type, ID: t.ID, User: t.User, Status: t.Status, ExitStatus: t.ExitStatus})
		}
	}
	s.mu.Unlock()
	return v
}

// adminFaultRule is FaultRule with a human-readable latency ("250ms").
type adminFaultRule struct {
	FaultRule
	Latency string `json:"latency,omitempty"`
}

// adminOneShot is a drop or a hold: it catches the next matching request.
type adminOneShot struct {
	Method      string `json:"method"`
	PathPattern string `json:"pathPattern"`
}

type adminFaultsBody struct {
	// Seed, when not 0, restarts the simulator's randomness (see Faults.Seed).
	Seed  uint64           `json:"seed,omitempty"`
	Rules []adminFaultRule `json:"rules"`
	Drops []adminOneShot   `json:"drops,omitempty"`
	Holds []adminOneShot   `json:"holds,omitempty"`
}

// adminFaultsResult names the holds a PUT /_sim/faults armed, for polling and release.
type adminFaultsResult struct {
	Holds []HoldView `json:"holds"`
}

func (s *Server) adminFaults(hr *http.Request) (adminFaultsResult, error) {
	res := adminFaultsResult{Holds: []HoldView{}}
	var body adminFaultsBody
	if err := decodeAdmin(hr, &body); err != nil {
		return res, err
	}
	f, err := body.faults()
	if err != nil {
		return res, err
	}
	for _, o := range append(slices.Clone(body.Drops), body.Holds...) {
		if err := checkPattern(o.PathPattern); err != nil {
			return res, err
		}
	}
	if err := s.faults.set(f); err != nil {
		return res, err
	}
	for _, d := range body.Drops {
		s.DropAfterApply(d.Method, d.PathPattern)
	}
	for _, h := range body.Holds {
		res.Holds = append(res.Holds, s.faults.holds.view(s.HoldResponse(h.Method, h.PathPattern)))
	}
	return res, nil
}

// faults converts the rules, parsing their human-readable latencies.
func (body adminFaultsBody) faults() (Faults, error) {
	f := Faults{Seed: body.Seed}
	for _, r := range body.Rules {
		rule := r.FaultRule
		if r.Latency != "" {
			d, err := time.ParseDuration(r.Latency)
			if err != nil {
				return f, errf(http.StatusBadRequest, "invalid latency %q", r.Latency)
			}
			rule.Latency = d
		}
		f.Rules = append(f.Rules, rule)
	}
	return f, nil
}

// Long polls on GET /_sim/holds wait 30 s unless told otherwise, and never more than
// maxHoldWait, so a forgotten poll cannot pin a connection for ever.
const (
	defaultHoldWait = 30 * time.Second
	maxHoldWait     = 10 * time.Minute
)

// adminHolds lists the holds (?id=N: only that one); with ?wait=STATE it first waits
// until one of them is in STATE (?timeout=10s).
func (s *Server) adminHolds(hr *http.Request) ([]HoldView, error) {
	q := hr.URL.Query()
	w := holdWait{state: q.Get("wait"), timeout: defaultHoldWait}
	if v := q.Get("id"); v != "" {
		id, err := strconv.Atoi(v)
		if err != nil || id <= 0 {
			return nil, errf(http.StatusBadRequest, "invalid hold id %q", v)
		}
		w.id = id
	}
	if v := q.Get("timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > maxHoldWait {
			return nil, errf(http.StatusBadRequest, "invalid timeout %q (a duration up to %s)", v, maxHoldWait)
		}
		w.timeout = d
	}
	switch w.state {
	case "":
		return s.faults.holds.views(w.id), nil
	case HoldArmed, HoldHeld, HoldReleased:
		return s.faults.holds.waitFor(hr.Context(), s.stopCh, w)
	}
	return nil, errf(http.StatusBadRequest, "invalid wait %q: armed, held or released", w.state)
}

// holdReleasePath recognises POST /_sim/holds/{id}/release.
func holdReleasePath(p, method string) (int, bool) {
	rest, ok := strings.CutPrefix(p, "/_sim/holds/")
	if !ok || method != http.MethodPost {
		return 0, false
	}
	idText, ok := strings.CutSuffix(rest, "/release")
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(idText)
	return id, err == nil && id > 0
}

func (s *Server) adminTokens(hr *http.Request) error {
	var body struct {
		TokenID string `json:"tokenid"`
		Secret  string `json:"secret"`
		Delete  bool   `json:"delete"`
	}
	if err := decodeAdmin(hr, &body); err != nil {
		return err
	}
	if !strings.Contains(body.TokenID, "!") {
		return errf(http.StatusBadRequest, "tokenid must look like user@realm!name")
	}
	if body.Delete {
		s.RemoveToken(body.TokenID)
		return nil
	}
	s.AddToken(body.TokenID, body.Secret)
	return nil
}

func (s *Server) adminUsers(hr *http.Request) error {
	var body struct {
		UserID   string `json:"userid"`
		Password string `json:"password"`
		Delete   bool   `json:"delete"`
	}
	if err := decodeAdmin(hr, &body); err != nil {
		return err
	}
	if !strings.Contains(body.UserID, "@") {
		return errf(http.StatusBadRequest, "userid must look like user@realm")
	}
	if body.Delete {
		s.RemoveUser(body.UserID)
		return nil
	}
	s.AddUser(body.UserID, body.Password)
	return nil
}

type adminGuestBody struct {
	// Action is "seed" (default), "template" or "drift".
	Action string `json:"action"`
	GuestSeed
	Name string `json:"name,omitempty"`
	// Drift: config keys to set ("" deletes), a power state, a node to move to.
	Status string `json:"status,omitempty"`
}

func (s *Server) adminGuests(hr *http.Request) error {
	var body adminGuestBody
	if err := decodeAdmin(hr, &body); err != nil {
		return err
	}
	switch body.Action {
	case "", "seed":
		return s.AddGuest(body.GuestSeed)
	case "template":
		return s.AddTemplate(body.Node, body.VMID, body.Name)
	case "drift":
		return s.drift(body)
	}
	return errf(http.StatusBadRequest, "unknown action %q", body.Action)
}

func (s *Server) drift(body adminGuestBody) error {
	for _, k := range sortedKeys(body.Config) {
		if err := s.SetGuestConfig(body.VMID, k, body.Config[k]); err != nil {
			return err
		}
	}
	if body.Status != "" {
		if err := s.SetGuestStatus(body.VMID, body.Status); err != nil {
			return err
		}
	}
	if body.Node != "" {
		if g, ok := s.Guest(body.VMID); ok && g.Node != body.Node {
			return s.MigrateGuest(body.VMID, body.Node)
		}
	}
	return nil
}

func (s *Server) adminVolumes(hr *http.Request) error {
	var body struct {
		Node  string `json:"node"`
		VolID string `json:"volid"`
	}
	if err := decodeAdmin(hr, &body); err != nil {
		return err
	}
	return s.AddVolume(body.Node, body.VolID)
}

// adminVNets adds an applied SDN VNet: {"vnet": "vnet1", "zone": "zone1", "tag": 100}.
func (s *Server) adminVNets(hr *http.Request) error {
	var v VNet
	if err := decodeAdmin(hr, &v); err != nil {
		return err
	}
	return s.AddVNet(v)
}

// nodeSwitchPath recognises POST /_sim/nodes/{node}/offline and .../online.
func nodeSwitchPath(p, method string) (string, bool, bool) {
	rest, ok := strings.CutPrefix(p, "/_sim/nodes/")
	if !ok || method != http.MethodPost {
		return "", false, false
	}
	node, action, ok := strings.Cut(rest, "/")
	if !ok || node == "" || (action != "offline" && action != "online") {
		return "", false, false
	}
	return node, action == "offline", true
}

// adminNode takes a node offline (body, optional: {"reason": "Connection
// refused"}) or brings it back.
func (s *Server) adminNode(hr *http.Request, node string, offline bool) error {
	var body struct {
		Reason string `json:"reason"`
	}
	if hr.ContentLength > 0 {
		if err := decodeAdmin(hr, &body); err != nil {
			return err
		}
	}
	if body.Reason != "" && body.Reason != NodeNoRoute && body.Reason != NodeRefused {
		return errf(http.StatusBadRequest, "reason must be %q or %q", NodeNoRoute, NodeRefused)
	}
	return s.SetNodeOffline(node, offline, body.Reason)
}
