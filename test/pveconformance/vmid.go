package pveconformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// ErrRangeExhausted means every VMID of the range is taken.
var ErrRangeExhausted = errors.New("no free VMID left in the range")

// allocator hands out the range's VMIDs, each once per run.
type allocator struct {
	mu    sync.Mutex
	r     VMIDRange
	next  int
	given map[int]bool
}

func newAllocator(r VMIDRange) *allocator {
	return &allocator{r: r, next: r.First, given: map[int]bool{}}
}

// AllocVMID returns a VMID of the range no guest has and this run has not
// handed out, asking the target (GET /cluster/nextid?vmid=N answers 400
// for a taken id; pve-manager PVE/API2/Cluster.pm nextid).
func (tg *Target) AllocVMID(ctx context.Context) (int, error) {
	a := tg.vmids
	a.mu.Lock()
	defer a.mu.Unlock()
	for ; a.next <= a.r.Last; a.next++ {
		id := a.next
		if tg.sim != nil && id == tg.cfg.TemplateVMID {
			continue
		}
		res, err := tg.Raw(ctx, http.MethodGet, "/cluster/nextid", Params("vmid", strconv.Itoa(id)))
		if err != nil {
			return 0, err
		}
		if res.Status == http.StatusOK {
			a.next++
			a.given[id] = true
			return id, nil
		}
	}
	return 0, fmt.Errorf("%w %s", ErrRangeExhausted, a.r)
}

// Guest is one entry of /cluster/resources?type=vm.
type Guest struct {
	VMID     int    `json:"vmid"`
	Name     string `json:"name"`
	Node     string `json:"node"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	Template int    `json:"template"`
	Pool     string `json:"pool"`
}

// GuestsInRange lists the guests whose VMID is in the target's range.
func (tg *Target) GuestsInRange(ctx context.Context) ([]Guest, error) {
	res, err := tg.Raw(ctx, http.MethodGet, "/cluster/resources", Params("type", "vm"))
	if err != nil {
		return nil, err
	}
	var all []Guest
	if res.Status != http.StatusOK {
		return nil, fmt.Errorf("list guests: %s", res.StatusLine)
	}
	if err := res.Data(&all); err != nil {
		return nil, err
	}
	var in []Guest
	for _, g := range all {
		if tg.cfg.VMIDs.Contains(g.VMID) && (tg.sim == nil || g.VMID != tg.cfg.TemplateVMID) {
			in = append(in, g)
		}
	}
	sort.Slice(in, func(i, j int) bool { return in[i].VMID < in[j].VMID })
	return in, nil
}

// ErrRangeNotEmpty is CheckRange's refusal.
var ErrRangeNotEmpty = errors.New("the VMID range is not empty")

// CheckRange is the guard run before anything is created on a real target:
// the range must hold no guest at all. Guests of an interrupted run (named
// with Prefix) are for the cleanup subcommand to remove; anything else is
// someone else's and the suite will not run beside it.
func (tg *Target) CheckRange(ctx context.Context) error {
	in, err := tg.GuestsInRange(ctx)
	if err != nil {
		return err
	}
	if len(in) == 0 {
		return nil
	}
	var ours, foreign []string
	for _, g := range in {
		d := fmt.Sprintf("%d (%s %q on %s)", g.VMID, g.Type, g.Name, g.Node)
		if strings.HasPrefix(g.Name, Prefix) {
			ours = append(ours, d)
		} else {
			foreign = append(foreign, d)
		}
	}
	msg := tg.cfg.VMIDs.String()
	if len(foreign) > 0 {
		msg += fmt.Sprintf("; not created by this suite, so never touched: %s: choose another %s", strings.Join(foreign, ", "), EnvVMIDRange)
	}
	if len(ours) > 0 {
		msg += fmt.Sprintf("; left by an interrupted run: %s: remove them with `go run ./cmd/pve-conformance cleanup`", strings.Join(ours, ", "))
	}
	return fmt.Errorf("%w %s", ErrRangeNotEmpty, msg)
}
