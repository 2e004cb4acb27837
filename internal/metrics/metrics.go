/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package metrics holds the provider's Proxmox VE metrics. One Proxmox is
// created per provider process (internal/provider) and handed to what
// observes: the client layer (requests and tasks), the client cache
// (rebuilds) and the ProxmoxConnection controller (readiness).
//
// Every series carries the label connection, the ProxmoxConnection's name.
// No label carries a credential, a guest's name or VMID, a node name or a
// task id: requests are labelled by their route template
// (/nodes/{node}/qemu/{vmid}/config), tasks by PVE's task type (qmclone).
package metrics

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Metric and label names, as scraped.
const (
	RequestsTotal          = "proxmox_requests_total"
	RequestDurationSeconds = "proxmox_request_duration_seconds"
	TaskDurationSeconds    = "proxmox_task_duration_seconds"
	TaskFailuresTotal      = "proxmox_task_failures_total"
	ConnectionReady        = "proxmox_connection_ready"
	ClientRebuildsTotal    = "proxmox_client_rebuilds_total"
	RequestsInFlight       = "proxmox_requests_in_flight"
	RequestsWaiting        = "proxmox_requests_waiting"
	ConnectionEndpoints    = "proxmox_connection_endpoints"
	CertificateExpiry      = "proxmox_custom_certificate_expiry_timestamp_seconds"
	SnapshotPolicyNextRun  = "proxmox_snapshot_policy_next_run_timestamp_seconds"
	SnapshotPolicyLastRun  = "proxmox_snapshot_policy_last_run_timestamp_seconds"

	LabelExitStatus = "exitstatus"
	LabelHealth     = "health"
	LabelNamespace  = "namespace"
	LabelName       = "name"

	LabelConnection = "connection"
	LabelMethod     = "method"
	LabelRoute      = "route"
	LabelCode       = "code"
	LabelType       = "type"
)

// NoStatus is the code of a request that got no HTTP answer: a connection
// refused or reset, a TLS failure, a timeout.
const NoStatus = "error"

// OtherTaskType stands for a task type that does not look like one of PVE's
// (it would otherwise be copied into a label as PVE sent it).
const OtherTaskType = "other"

// maxTaskTypeLength bounds a task type kept as a label; PVE's are short
// words (qmclone, vzcreate, imgcopy).
const maxTaskTypeLength = 32

var (
	// requestBuckets span a cached GET answered in milliseconds to a write
	// pveproxy holds for tens of seconds.
	requestBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	// taskBuckets span a start or shutdown of seconds to a full clone or
	// download of an hour.
	taskBuckets = []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
)

// Proxmox holds the collectors. Its methods are safe for concurrent use, and
// do nothing on a nil *Proxmox (a provider built without metrics).
type Proxmox struct {
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	taskDuration *prometheus.HistogramVec
	taskFailures *prometheus.CounterVec
	ready        *prometheus.GaugeVec
	rebuilds     *prometheus.CounterVec
	inFlight     *prometheus.GaugeVec
	waiting      *prometheus.GaugeVec
	endpoints    *prometheus.GaugeVec
	status       statusGauges
}

// NewProxmox creates the collectors and registers them with reg. A
// collector reg already holds (a second provider in one test process) is
// shared rather than refused, so every provider's observations are scraped.
func NewProxmox(reg prometheus.Registerer) (*Proxmox, error) {
	m := &Proxmox{}
	var err error
	if m.requests, err = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: RequestsTotal,
		Help: "HTTP requests sent to Proxmox VE (each attempt, retries and logins included), by route template and status code; code=\"" + NoStatus + "\" when no answer came.",
	}, []string{LabelConnection, LabelMethod, LabelRoute, LabelCode})); err != nil {
		return nil, err
	}
	if m.latency, err = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    RequestDurationSeconds,
		Help:    "Time from sending a request to Proxmox VE to its response headers (or its failure), by route template.",
		Buckets: requestBuckets,
	}, []string{LabelConnection, LabelMethod, LabelRoute})); err != nil {
		return nil, err
	}
	if m.taskDuration, err = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    TaskDurationSeconds,
		Help:    "Time from the provider starting a Proxmox VE task to first seeing it finished (successful or not), by PVE task type.",
		Buckets: taskBuckets,
	}, []string{LabelConnection, LabelType})); err != nil {
		return nil, err
	}
	if m.taskFailures, err = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: TaskFailuresTotal,
		Help: "Proxmox VE tasks started by the provider that finished with an error, by PVE task type and class of exit status (" + ExitInterrupted + ", " + ExitUnexpected + ", " + ExitError + ").",
	}, []string{LabelConnection, LabelType, LabelExitStatus})); err != nil {
		return nil, err
	}
	if m.ready, err = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: ConnectionReady,
		Help: "1 when the ProxmoxConnection's credentials were last verified against Proxmox VE (Ready), 0 otherwise.",
	}, []string{LabelConnection})); err != nil {
		return nil, err
	}
	if m.rebuilds, err = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: ClientRebuildsTotal,
		Help: "Times a connection's Proxmox VE client was replaced by one built from changed credentials or settings (a rotation).",
	}, []string{LabelConnection})); err != nil {
		return nil, err
	}
	if m.inFlight, err = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: RequestsInFlight,
		Help: "Requests to Proxmox VE holding one of the connection's maxConcurrentRequests slots (sent, answer not yet read).",
	}, []string{LabelConnection})); err != nil {
		return nil, err
	}
	if m.waiting, err = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: RequestsWaiting,
		Help: "Requests waiting for one of the connection's maxConcurrentRequests slots: above 0 for long, the connection is saturated (slow answers, or more resources than its slots serve per poll interval).",
	}, []string{LabelConnection})); err != nil {
		return nil, err
	}
	if m.endpoints, err = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: ConnectionEndpoints,
		Help: "The connection's endpoints by health (Healthy, Down) as its status last reported them.",
	}, []string{LabelConnection, LabelHealth})); err != nil {
		return nil, err
	}
	if m.status, err = newStatusGauges(reg); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the equal collector reg already holds.
func register[T prometheus.Collector](reg prometheus.Registerer, c T) (T, error) {
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(T); ok {
			return existing, nil
		}
	}
	return c, errors.Wrap(err, "cannot register a metric collector")
}

// Connection returns where the client of connection reports; nil when m is.
func (m *Proxmox) Connection(connection string) *Connection {
	if m == nil {
		return nil
	}
	l := prometheus.Labels{LabelConnection: connection}
	return &Connection{
		requests:     m.requests.MustCurryWith(l),
		latency:      m.latency.MustCurryWith(l),
		taskDuration: m.taskDuration.MustCurryWith(l),
		taskFailures: m.taskFailures.MustCurryWith(l),
		inFlight:     m.inFlight.With(l),
		waiting:      m.waiting.With(l),
	}
}

// SetConnectionReady records the outcome of connection's latest
// verification.
func (m *Proxmox) SetConnectionReady(connection string, ready bool) {
	if m == nil {
		return
	}
	v := 0.0
	if ready {
		v = 1
	}
	m.ready.WithLabelValues(connection).Set(v)
}

// CountClientRebuild records that connection's client was replaced.
func (m *Proxmox) CountClientRebuild(connection string) {
	if m == nil {
		return
	}
	m.rebuilds.WithLabelValues(connection).Inc()
}

// SetEndpoints records how many of connection's endpoints are in each
// health; a health no endpoint has any more is reported as 0, not dropped,
// so an alert on Down endpoints resolves.
func (m *Proxmox) SetEndpoints(connection string, byHealth map[string]int, healths []string) {
	if m == nil {
		return
	}
	for _, h := range healths {
		m.endpoints.WithLabelValues(connection, h).Set(float64(byHealth[h]))
	}
}

// ForgetConnection drops every series of a deleted connection, so scrapes do
// not report it forever.
func (m *Proxmox) ForgetConnection(connection string) {
	if m == nil {
		return
	}
	l := prometheus.Labels{LabelConnection: connection}
	m.requests.DeletePartialMatch(l)
	m.latency.DeletePartialMatch(l)
	m.taskDuration.DeletePartialMatch(l)
	m.taskFailures.DeletePartialMatch(l)
	m.ready.DeletePartialMatch(l)
	m.rebuilds.DeletePartialMatch(l)
	m.inFlight.DeletePartialMatch(l)
	m.waiting.DeletePartialMatch(l)
	m.endpoints.DeletePartialMatch(l)
}

// Connection is the part of the metrics one connection's client reports to.
// Its methods do nothing on a nil *Connection.
type Connection struct {
	requests     *prometheus.CounterVec
	latency      prometheus.ObserverVec
	taskDuration prometheus.ObserverVec
	taskFailures *prometheus.CounterVec
	inFlight     prometheus.Gauge
	waiting      prometheus.Gauge
}

// AddWaiting moves the count of requests waiting for a slot by delta.
func (c *Connection) AddWaiting(delta int) {
	if c != nil {
		c.waiting.Add(float64(delta))
	}
}

// AddInFlight moves the count of requests holding a slot by delta.
func (c *Connection) AddInFlight(delta int) {
	if c != nil {
		c.inFlight.Add(float64(delta))
	}
}

// ObserveRequest records one request: route is its template, never a raw
// path; status 0 means no HTTP answer came.
func (c *Connection) ObserveRequest(method, route string, status int, took time.Duration) {
	if c == nil {
		return
	}
	code := NoStatus
	if status > 0 {
		code = strconv.Itoa(status)
	}
	c.requests.WithLabelValues(method, route, code).Inc()
	c.latency.WithLabelValues(method, route).Observe(took.Seconds())
}

// ObserveTask records a task seen finished took after it was started;
// exitStatus is PVE's, read only when failed.
func (c *Connection) ObserveTask(taskType string, took time.Duration, failed bool, exitStatus string) {
	if c == nil {
		return
	}
	t := taskTypeLabel(taskType)
	c.taskDuration.WithLabelValues(t).Observe(took.Seconds())
	if failed {
		c.taskFailures.WithLabelValues(t, exitStatusClass(exitStatus)).Inc()
	}
}

// Classes of a failed task's exit status, as labelled.
const (
	ExitInterrupted = "interrupted"
	ExitUnexpected  = "unexpected"
	ExitError       = "error"
)

// exitStatusClass reduces a failed task's exit status to a class. PVE's
// worker dies with "received interrupt" when stopped (a task stopped from
// the GUI: pve-common src/PVE/RESTEnvironment.pm, fork_worker); the status
// is "unexpected status" or "unable to get last line from task log - ..."
// when the log does not end in a TASK line, else the error the task died
// with (src/PVE/UPID.pm, read_status). The message itself names guests and
// paths, so it is never a label.
func exitStatusClass(exit string) string {
	switch {
	case exit == "received interrupt":
		return ExitInterrupted
	case exit == "unexpected status", strings.HasPrefix(exit, "unable to get last line from task log"):
		return ExitUnexpected
	default:
		return ExitError
	}
}

// taskTypeLabel keeps a task type that looks like PVE's (a short word of
// letters, digits, '-' and '_') and replaces anything else.
func taskTypeLabel(t string) string {
	if t == "" || len(t) > maxTaskTypeLength {
		return OtherTaskType
	}
	for _, r := range t {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' && r != '_' {
			return OtherTaskType
		}
	}
	return t
}
