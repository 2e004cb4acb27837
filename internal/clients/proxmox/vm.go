package proxmox

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// GuestType is the kind of guest a VMID holds, as PVE names it in its paths
// (/nodes/{node}/qemu/{vmid}, /nodes/{node}/lxc/{vmid}) and in the type of a
// /cluster/resources row.
type GuestType string

// The guest types PVE knows.
const (
	QEMU GuestType = "qemu"
	LXC  GuestType = "lxc"
)

// TaskType is PVE's task type for action (start, shutdown, reboot, ...) on a
// guest of this type: qmstart for a QEMU guest, vzstart for a container.
func (t GuestType) TaskType(action string) string {
	if t == LXC {
		return "vz" + action
	}
	return "qm" + action
}

// GuestRef locates a guest: its type, its VMID and the node it lives on now.
type GuestRef struct {
	Type GuestType
	Node string
	VMID int
}

// collection is the path the guests of this type on this node live under.
func (r GuestRef) collection() string {
	return "/nodes/" + url.PathEscape(r.Node) + "/" + string(r.Type)
}

func (r GuestRef) path(suffix string) string {
	return r.collection() + "/" + strconv.Itoa(r.VMID) + suffix
}

func (r GuestRef) String() string { return r.Node + "/" + strconv.Itoa(r.VMID) }

// Noun names the guest type in messages: a container's errors must not read
// "VM" although the client's guest methods serve both types.
func (t GuestType) Noun() string {
	if t == LXC {
		return "container"
	}
	return "VM"
}

// Named is the guest's type and location as errors name it ("container pve/101").
func (r GuestRef) Named() string { return r.Type.Noun() + " " + r.String() }

// PendingEntry is one key of GET /pending: the running (current) value, the
// value waiting for the next boot, and whether its deletion is pending.
type PendingEntry struct {
	Value      string
	HasValue   bool
	Pending    string
	HasPending bool
	Delete     bool
}

// GuestConfig is a guest's configuration as GET /pending returns it: one
// request gives both the current values and what PVE keeps pending.
type GuestConfig map[string]PendingEntry

// Current returns the running value of key.
func (g GuestConfig) Current(key string) (string, bool) {
	e, ok := g[key]
	if !ok || !e.HasValue {
		return "", false
	}
	return e.Value, true
}

// Effective returns the value key will have after the next boot: the pending
// value when there is one, nothing when its deletion is pending, else the
// current value. Comparing the spec against this avoids re-sending a change
// PVE already holds.
func (g GuestConfig) Effective(key string) (string, bool) {
	e, ok := g[key]
	switch {
	case !ok:
		return "", false
	case e.Delete:
		return "", false
	case e.HasPending:
		return e.Pending, true
	case e.HasValue:
		return e.Value, true
	}
	return "", false
}

// PendingKeys lists the keys whose change waits for a reboot, sorted.
func (g GuestConfig) PendingKeys() []string {
	var keys []string
	for k, e := range g {
		if e.HasPending || e.Delete {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

type wirePending struct {
	Key     wireText  `json:"key"`
	Value   *wireText `json:"value"`
	Pending *wireText `json:"pending"`
	Delete  wireInt   `json:"delete"`
}

// GuestPending reads a guest's configuration with its pending changes in one
// request (GET /nodes/{node}/qemu/{vmid}/pending).
func (c *Client) GuestPending(ctx context.Context, ref GuestRef) (GuestConfig, error) {
	var raw []wirePending
	if err := c.API().Get(ctx, ref.path("/pending"), &raw); err != nil {
		return nil, errors.Wrapf(err, "cannot read configuration of %s", ref.Named())
	}
	out := make(GuestConfig, len(raw))
	for _, w := range raw {
		e := PendingEntry{Delete: w.Delete != 0}
		if w.Value != nil {
			e.Value, e.HasValue = string(*w.Value), true
		}
		if w.Pending != nil {
			e.Pending, e.HasPending = string(*w.Pending), true
		}
		out[string(w.Key)] = e
	}
	return out, nil
}

// GuestStatus is the live state of a guest from status/current.
type GuestStatus struct {
	VMID      int
	Name      string
	Status    string // running | stopped
	QMPStatus string // running | paused | prelaunch | ...
	Uptime    int64
	Lock      string
	Template  bool
	Agent     bool
}

// Running reports whether the guest's QEMU process runs.
func (s GuestStatus) Running() bool { return s.Status == "running" }

type wireStatus struct {
	VMID      wireInt  `json:"vmid"`
	Name      wireText `json:"name"`
	Status    wireText `json:"status"`
	QMPStatus wireText `json:"qmpstatus"`
	Uptime    wireInt  `json:"uptime"`
	Lock      wireText `json:"lock"`
	Template  wireText `json:"template"`
	Agent     wireText `json:"agent"`
}

// GuestStatus reads status/current, the authority for power decisions
// (/cluster/resources lags behind it).
func (c *Client) GuestStatus(ctx context.Context, ref GuestRef) (GuestStatus, error) {
	var w wireStatus
	if err := c.API().Get(ctx, ref.path("/status/current"), &w); err != nil {
		return GuestStatus{}, errors.Wrapf(err, "cannot read status of %s", ref.Named())
	}
	return GuestStatus{
		VMID: int(w.VMID), Name: string(w.Name), Status: string(w.Status), QMPStatus: string(w.QMPStatus),
		Uptime: int64(w.Uptime), Lock: string(w.Lock), Template: boolText(string(w.Template)), Agent: boolText(string(w.Agent)),
	}, nil
}

// VMIDInUse asks PVE's cluster-wide VMID list (not the lagging resource
// listing) whether vmid is taken: GET /cluster/nextid?vmid=N answers the id
// when it is free and 400 "VM N already exists" when it is not.
func (c *Client) VMIDInUse(ctx context.Context, vmid int) (bool, error) {
	var raw json.RawMessage
	err := c.API().Get(ctx, "/cluster/nextid?vmid="+strconv.Itoa(vmid), &raw)
	switch {
	case err == nil:
		return false, nil
	case IsAlreadyExists(err):
		return true, nil
	}
	return false, errors.Wrapf(err, "cannot check whether VMID %d is free", vmid)
}

// NextVMID returns PVE's lowest free VMID. PVE reserves nothing: two callers
// get the same answer, which is why VMIDAllocator exists.
func (c *Client) NextVMID(ctx context.Context) (int, error) {
	var s wireText
	if err := c.API().Get(ctx, "/cluster/nextid", &s); err != nil {
		return 0, errors.Wrap(err, "cannot get next free VMID")
	}
	id, err := strconv.Atoi(strings.TrimSpace(string(s)))
	if err != nil {
		return 0, errors.Wrapf(err, "cannot parse next VMID %q", string(s))
	}
	return id, nil
}

// CloneOptions are the parameters of POST /qemu/{vmid}/clone and
// /lxc/{vmid}/clone.
type CloneOptions struct {
	NewID       int
	Name        string
	Description string
	Full        bool
	Target      string // node; "" = the source's node
	Storage     string // full clones only
	Pool        string
}

// CloneGuest starts cloning src and returns the task's UPID. PVE creates the
// new config at once, locked "clone".
func (c *Client) CloneGuest(ctx context.Context, src GuestRef, o CloneOptions) (string, error) {
	p := map[string]string{"newid": strconv.Itoa(o.NewID), "full": pveBool(o.Full)}
	// A container's name is its hostname.
	nameKey := "name"
	if src.Type == LXC {
		nameKey = "hostname"
	}
	setIf(p, nameKey, o.Name)
	setIf(p, "description", o.Description)
	setIf(p, "target", o.Target)
	if o.Full {
		setIf(p, "storage", o.Storage)
	}
	setIf(p, "pool", o.Pool)
	c.resources.guestCreated()
	var raw json.RawMessage
	if err := c.API().Post(ctx, src.path("/clone"), p, &raw); err != nil {
		return "", errors.Wrapf(err, "cannot clone %s to %d", src.Named(), o.NewID)
	}
	return c.startedTask(raw)
}

// CreateGuest starts creating the guest ref names (its type, node and
// VMID) from raw PVE keys (vmid is added) and returns the task's UPID.
func (c *Client) CreateGuest(ctx context.Context, ref GuestRef, params map[string]string) (string, error) {
	p := make(map[string]string, len(params)+1)
	for k, v := range params {
		p[k] = v
	}
	p["vmid"] = strconv.Itoa(ref.VMID)
	c.resources.guestCreated()
	var raw json.RawMessage
	if err := c.API().Post(ctx, ref.collection(), p, &raw); err != nil {
		return "", errors.Wrapf(err, "cannot create %s", ref.Named())
	}
	return c.startedTask(raw)
}

func configParams(set map[string]string, del []string) map[string]string {
	p := make(map[string]string, len(set)+1)
	for k, v := range set {
		p[k] = v
	}
	if len(del) > 0 {
		d := append([]string(nil), del...)
		sort.Strings(d)
		p["delete"] = strings.Join(d, ",")
	}
	return p
}

// SetGuestConfig changes keys synchronously (PUT config). Changes PVE cannot
// hot-plug are kept pending until the next boot.
func (c *Client) SetGuestConfig(ctx context.Context, ref GuestRef, set map[string]string, del []string) error {
	if err := c.API().Put(ctx, ref.path("/config"), configParams(set, del), nil); err != nil {
		return errors.Wrapf(err, "cannot update configuration of %s", ref.Named())
	}
	return nil
}

// SetGuestConfigAsync changes keys through POST config, needed when PVE must
// allocate storage (a new disk). It returns the UPID, or "" when PVE finished
// without a task.
func (c *Client) SetGuestConfigAsync(ctx context.Context, ref GuestRef, set map[string]string, del []string) (string, error) {
	var raw json.RawMessage
	if err := c.API().Post(ctx, ref.path("/config"), configParams(set, del), &raw); err != nil {
		return "", errors.Wrapf(err, "cannot update configuration of %s", ref.Named())
	}
	return c.startedTask(raw)
}

// ResizeDisk grows disk to size (e.g. "60G"), returning the UPID ("" when PVE
// answered without a task, as older releases did).
func (c *Client) ResizeDisk(ctx context.Context, ref GuestRef, disk, size string) (string, error) {
	var raw json.RawMessage
	if err := c.API().Put(ctx, ref.path("/resize"), map[string]string{"disk": disk, sizeKey: size}, &raw); err != nil {
		return "", errors.Wrapf(err, "cannot resize disk %s of %s", disk, ref.Named())
	}
	return c.startedTask(raw)
}

func (c *Client) powerAction(ctx context.Context, ref GuestRef, action string, p map[string]string) (string, error) {
	var raw json.RawMessage
	var body any
	if len(p) > 0 {
		body = p
	}
	if err := c.API().Post(ctx, ref.path("/status/"+action), body, &raw); err != nil {
		return "", errors.Wrapf(err, "cannot %s %s", action, ref.Named())
	}
	return c.startedTask(raw)
}

// StartGuest starts a guest and returns the UPID.
func (c *Client) StartGuest(ctx context.Context, ref GuestRef) (string, error) {
	return c.powerAction(ctx, ref, "start", nil)
}

// ShutdownGuest asks the guest OS to power off within timeoutSeconds; with
// forceStop PVE stops it when the timeout passes.
func (c *Client) ShutdownGuest(ctx context.Context, ref GuestRef, timeoutSeconds int, forceStop bool) (string, error) {
	p := map[string]string{"forceStop": pveBool(forceStop)}
	if timeoutSeconds > 0 {
		p["timeout"] = strconv.Itoa(timeoutSeconds)
	}
	return c.powerAction(ctx, ref, "shutdown", p)
}

// StopGuest stops a guest at once (like pulling the plug).
func (c *Client) StopGuest(ctx context.Context, ref GuestRef) (string, error) {
	return c.powerAction(ctx, ref, "stop", nil)
}

// RebootGuest shuts the guest down and lets PVE start it again, applying
// pending changes.
func (c *Client) RebootGuest(ctx context.Context, ref GuestRef, timeoutSeconds int) (string, error) {
	var p map[string]string
	if timeoutSeconds > 0 {
		p = map[string]string{"timeout": strconv.Itoa(timeoutSeconds)}
	}
	return c.powerAction(ctx, ref, "reboot", p)
}

// DeleteGuest destroys a stopped guest; purge also removes it from backup
// jobs, replication and HA, and unreferenced disks go too.
func (c *Client) DeleteGuest(ctx context.Context, ref GuestRef, purge bool) (string, error) {
	q := url.Values{}
	if purge {
		q.Set("purge", "1")
		q.Set("destroy-unreferenced-disks", "1")
	}
	p := ref.path("")
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	var raw json.RawMessage
	if err := c.API().Delete(ctx, p, &raw); err != nil {
		return "", errors.Wrapf(err, "cannot delete %s", ref.Named())
	}
	return c.startedTask(raw)
}

// CloudInitPending lists cloud-init keys whose change has not reached the
// cloud-init drive yet (GET /cloudinit): on a running VM those never show in
// /pending.
func (c *Client) CloudInitPending(ctx context.Context, ref GuestRef) ([]string, error) {
	var raw []wirePending
	if err := c.API().Get(ctx, ref.path("/cloudinit"), &raw); err != nil {
		return nil, errors.Wrapf(err, "cannot read cloud-init state of %s", ref.Named())
	}
	var keys []string
	for _, w := range raw {
		if w.Pending != nil || w.Delete != 0 {
			keys = append(keys, string(w.Key))
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// GuestNetwork is what the guest agent reports about one interface.
type GuestNetwork struct {
	Name        string
	MAC         string
	IPAddresses []string
	IPv4        []string
}

// AgentNetworkInterfaces asks the guest agent for the guest's interfaces. It
// fails when the agent is not running; callers treat that as "unknown yet".
func (c *Client) AgentNetworkInterfaces(ctx context.Context, ref GuestRef) ([]GuestNetwork, error) {
	var body struct {
		Result []struct {
			Name        wireText `json:"name"`
			MAC         wireText `json:"hardware-address"`
			IPAddresses []struct {
				Type    wireText `json:"ip-address-type"`
				Address wireText `json:"ip-address"`
			} `json:"ip-addresses"`
		} `json:"result"`
	}
	if err := c.API().Get(ctx, ref.path("/agent/network-get-interfaces"), &body); err != nil {
		return nil, errors.Wrapf(err, "cannot read network interfaces of %s from the guest agent", ref.Named())
	}
	out := make([]GuestNetwork, 0, len(body.Result))
	for _, r := range body.Result {
		n := GuestNetwork{Name: string(r.Name), MAC: string(r.MAC)}
		for _, a := range r.IPAddresses {
			n.IPAddresses = append(n.IPAddresses, string(a.Address))
			if string(a.Type) == "ipv4" {
				n.IPv4 = append(n.IPv4, string(a.Address))
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// FirstIPv4 returns the first IPv4 address that is not loopback or
// link-local, or "".
func FirstIPv4(ifs []GuestNetwork) string {
	for _, n := range ifs {
		if n.Name == "lo" {
			continue
		}
		for _, a := range n.IPv4 {
			if strings.HasPrefix(a, "127.") || strings.HasPrefix(a, "169.254.") {
				continue
			}
			return a
		}
	}
	return ""
}

// AgentOSInfo asks the guest agent for the OS name ("pretty-name", else
// "name"). Fails when the agent is not running.
func (c *Client) AgentOSInfo(ctx context.Context, ref GuestRef) (string, error) {
	var body struct {
		Result struct {
			PrettyName wireText `json:"pretty-name"`
			Name       wireText `json:"name"`
		} `json:"result"`
	}
	if err := c.API().Get(ctx, ref.path("/agent/get-osinfo"), &body); err != nil {
		return "", errors.Wrapf(err, "cannot read OS info of %s from the guest agent", ref.Named())
	}
	if body.Result.PrettyName != "" {
		return string(body.Result.PrettyName), nil
	}
	return string(body.Result.Name), nil
}

func setIf(p map[string]string, k, v string) {
	if v != "" {
		p[k] = v
	}
}

var (
	reAlreadyExists = regexp.MustCompile(`(?i)already exists`)
	reLocked        = regexp.MustCompile(`(?i)\bis locked\b|can't lock file|got timeout`)
	reRunning       = regexp.MustCompile(`(?i)\bis running\b`)
)

func apiMessage(err error) string {
	if err == nil {
		return ""
	}
	if a, ok := proxmox.AsAPIError(err); ok {
		msg := a.Message
		for k, v := range a.Errors {
			msg += " " + k + ": " + v
		}
		return msg
	}
	return err.Error()
}

// IsAlreadyExists reports whether PVE refused because the VMID is taken
// ("VM 100 already exists", "config file already exists").
func IsAlreadyExists(err error) bool {
	return err != nil && reAlreadyExists.MatchString(apiMessage(err))
}

// MessageMeansAlreadyExists is IsAlreadyExists for a task's exit status.
func MessageMeansAlreadyExists(msg string) bool { return reAlreadyExists.MatchString(msg) }

// IsLocked reports whether PVE refused because the guest (or its source) is
// locked by another operation; retrying later is the answer.
func IsLocked(err error) bool { return err != nil && reLocked.MatchString(apiMessage(err)) }

// IsGuestRunning reports PVE's "VM N is running" refusal (e.g. destroy).
func IsGuestRunning(err error) bool { return err != nil && reRunning.MatchString(apiMessage(err)) }

// IsGuestNotFound reports whether PVE said the guest (its config) does not
// exist. PVE answers 500 "Configuration file ... does not exist", not 404.
func IsGuestNotFound(err error) bool { return err != nil && proxmox.IsNotFound(err) }
