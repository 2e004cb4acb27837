package proxmox

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubemox/provider-proxmox/internal/metrics"
	"github.com/kubemox/provider-proxmox/internal/metrics/metricstest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func newTestMetrics(t *testing.T) (*metrics.Proxmox, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.NewProxmox(reg)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

func gatherSamples(t *testing.T, reg *prometheus.Registry) metricstest.Samples {
	t.Helper()
	s, err := metricstest.Gather(reg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func withMetrics(m *metrics.Proxmox, connection string) func(*Config) {
	return func(cfg *Config) { cfg.Metrics = m.Connection(connection) }
}

// TestRequestMetrics: every request on the wire is counted under its route
// template, logins and answers without a status included.
func TestRequestMetrics(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	if err := srv.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 4242}); err != nil {
		t.Fatal(err)
	}
	m, reg := newTestMetrics(t)
	c, w := simClient(t, srv, withMetrics(m, "lab"))
	if _, err := c.Verify(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GuestPending(t.Context(), GuestRef{Type: QEMU, Node: "pve", VMID: 4242}); err != nil {
		t.Fatal(err)
	}
	_, _ = c.GuestPending(t.Context(), GuestRef{Type: QEMU, Node: "pve", VMID: 4243}) // no such guest

	s := gatherSamples(t, reg)
	for _, tc := range []struct {
		method, route, code string
		want                float64
	}{
		{"POST", "/access/ticket", "200", 1}, // Verify logs in, later requests share the ticket
		{"GET", "/version", "200", 1},
		{"GET", "/nodes/{node}/qemu/{vmid}/pending", "200", 1},
		{"GET", "/nodes/{node}/qemu/{vmid}/pending", "500", 1},
	} {
		got, _ := s.Sum(metrics.RequestsTotal, map[string]string{"connection": "lab", "method": tc.method, "route": tc.route, "code": tc.code})
		if got != tc.want {
			t.Errorf("%s{method=%s,route=%s,code=%s} = %v, want %v", metrics.RequestsTotal, tc.method, tc.route, tc.code, got, tc.want)
		}
	}
	total, _ := s.Sum(metrics.RequestsTotal, nil)
	if want := float64(w.total()); total != want {
		t.Errorf("requests counted = %v, want %v (every request on the wire)", total, want)
	}
	if n, _ := s.Sum(metrics.RequestDurationSeconds+"_count", nil); n != total {
		t.Errorf("latency observations = %v, want one per request (%v)", n, total)
	}
	for _, smp := range s {
		for _, v := range smp.Labels {
			if strings.Contains(v, "4242") || strings.Contains(v, "pve/") || strings.Contains(v, simPassword) {
				t.Errorf("label value %q of %s names a guest, a node or a credential", v, smp)
			}
		}
	}
}

func TestRequestWithoutAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there any more: connection refused
	m, reg := newTestMetrics(t)
	c, err := New(Config{Endpoint: addr, TokenID: simTokenID, Secret: simSecret, Metrics: m.Connection("down")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Retire)
	c.fastRetries()
	if _, err := c.Verify(t.Context()); err == nil {
		t.Fatal("Verify against a closed port succeeded")
	}
	got, _ := gatherSamples(t, reg).Sum(metrics.RequestsTotal, map[string]string{"route": "/version", "code": metrics.NoStatus})
	if got != float64(defaultRetryPolicy().attempts) {
		t.Errorf("unanswered attempts counted = %v, want %d (each attempt)", got, defaultRetryPolicy().attempts)
	}
}

// waitTaskFinished reads upid until PVE says it stopped, and returns how
// many reads that took.
func waitTaskFinished(t *testing.T, c *Client, upid string) TaskStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ts, err := c.TaskStatus(t.Context(), upid)
		if err != nil {
			t.Fatal(err)
		}
		if ts.Finished() {
			return ts
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s still running after 10s", upid)
	return TaskStatus{}
}

// TestTaskMetrics: a task this client started is measured once, when first
// seen finished; a failure is counted; a task another client started is not
// measured.
func TestTaskMetrics(t *testing.T) {
	const took = 300 * time.Millisecond
	srv := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"qmstart": took}})
	if err := srv.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 777}); err != nil {
		t.Fatal(err)
	}
	ref := GuestRef{Type: QEMU, Node: "pve", VMID: 777}
	m, reg := newTestMetrics(t)
	c, _ := simClient(t, srv, withMetrics(m, "lab"))

	upid, err := c.StartGuest(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if ts := waitTaskFinished(t, c, upid); ts.Failed() {
		t.Fatalf("start failed: %s", ts.ExitStatus)
	}
	waitTaskFinished(t, c, upid) // read again: not counted twice

	// Starting a running guest is a task that fails.
	again, err := c.StartGuest(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if ts := waitTaskFinished(t, c, again); !ts.Failed() {
		t.Fatalf("second start did not fail: %q", ts.ExitStatus)
	}

	// A task started by another client (before a rotation) is not this
	// client's to measure.
	other, _ := simClient(t, srv, nil)
	stop, err := other.StopGuest(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	waitTaskFinished(t, c, stop)

	s := gatherSamples(t, reg)
	lab := func(typ string) map[string]string { return map[string]string{"connection": "lab", "type": typ} }
	if n, _ := s.Sum(metrics.TaskDurationSeconds+"_count", lab("qmstart")); n != 2 {
		t.Errorf("qmstart durations observed = %v, want 2 (each task once)", n)
	}
	if sum, _ := s.Sum(metrics.TaskDurationSeconds+"_sum", lab("qmstart")); sum < took.Seconds() {
		t.Errorf("qmstart durations sum to %vs, want at least the first task's %v", sum, took)
	}
	if n, _ := s.Sum(metrics.TaskFailuresTotal, lab("qmstart")); n != 1 {
		t.Errorf("qmstart failures = %v, want 1", n)
	}
	if _, found := s.Sum(metrics.TaskDurationSeconds+"_count", lab("qmstop")); found {
		t.Error("a task another client started was measured")
	}
}

func TestTaskClockForgetsOldestBeyondItsBound(t *testing.T) {
	tc := newTaskClock()
	now := time.Now()
	for i := range maxTrackedTasks + 10 {
		tc.start("UPID:"+strconv.Itoa(i), "qmstart", now)
	}
	if _, ok := tc.finish("UPID:9"); ok {
		t.Error("one of the oldest tasks is still remembered")
	}
	if _, ok := tc.finish("UPID:10"); !ok {
		t.Error("the oldest task within the bound was forgotten")
	}
	if _, ok := tc.finish("UPID:10"); ok {
		t.Error("a finished task is remembered after finish")
	}
	if got := len(tc.started); got > maxTrackedTasks {
		t.Errorf("remembers %d tasks, bound %d", got, maxTrackedTasks)
	}
}

// TestSaturationMetrics: a request holding the only slot counts as in
// flight, one queued behind it as waiting, and both counts fall back to 0
// once the answers are read.
func TestSaturationMetrics(t *testing.T) {
	h := &blockingHandler{arrived: make(chan struct{}, 10), release: make(chan struct{})}
	srv, ca := tlsServer(t, h)
	m, reg := newTestMetrics(t)
	c := tokenClient(t, srv, ca, func(cfg *Config) {
		cfg.MaxConcurrentRequests = 1
		cfg.Metrics = m.Connection("lab")
	})
	conn := map[string]string{"connection": "lab"}
	gauges := func() (inFlight, waiting float64) {
		s := gatherSamples(t, reg)
		inFlight, _ = s.Sum(metrics.RequestsInFlight, conn)
		waiting, _ = s.Sum(metrics.RequestsWaiting, conn)
		return inFlight, waiting
	}

	done := make(chan error, 2)
	for range 2 {
		go func() { done <- c.API().Get(t.Context(), "/version", nil) }()
	}
	<-h.arrived
	deadline := time.Now().Add(5 * time.Second)
	for {
		inFlight, waiting := gauges()
		if inFlight == 1 && waiting == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("in flight %v, waiting %v; want 1 and 1 with one slot and two requests", inFlight, waiting)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(h.release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if inFlight, waiting := gauges(); inFlight != 0 || waiting != 0 {
		t.Errorf("after both answers: in flight %v, waiting %v; want 0 and 0", inFlight, waiting)
	}
}
