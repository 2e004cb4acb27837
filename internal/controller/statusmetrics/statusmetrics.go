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

// Package statusmetrics reports times read from resources' status as
// metrics (a CustomCertificate's expiry, a snapshot policy's next run), so
// that alerts can fire on them without a controller having to observe
// Proxmox VE for it. Each kind's gated setup adds its recorder: the
// recorder lists the kind, which must be served.
package statusmetrics

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/metrics"
)

// Record reads what it reports from the manager's cache.
type Record func(ctx context.Context, cache client.Reader) error

// Setup adds a recorder running record at once and then on the interval
// of crossplane-runtime's state metrics (the same freshness as the
// resource counts beside them), on every replica: a standby's cache is as
// current as the leader's.
func Setup(mgr ctrl.Manager, o controller.Options, record Record) error {
	every := time.Minute
	if o.MetricOptions != nil && o.MetricOptions.PollStateMetricInterval > 0 {
		every = o.MetricOptions.PollStateMetricInterval
	}
	r := &recorder{cache: mgr.GetClient(), record: record, every: every, log: o.Logger}
	return errors.Wrap(mgr.Add(r), "cannot add a status metrics recorder")
}

type recorder struct {
	cache  client.Reader
	record Record
	every  time.Duration
	log    logging.Logger
}

// Start records until ctx ends; a failed recording is logged and retried
// at the next tick (a runnable's error would stop the manager).
func (r *recorder) Start(ctx context.Context) error {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		if err := r.record(ctx, r.cache); err != nil {
			r.log.Info("Cannot record status metrics", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// CertificateExpiries reports each CustomCertificate's status.notAfter.
func CertificateExpiries(m *metrics.Proxmox) Record {
	return func(ctx context.Context, cache client.Reader) error {
		l := &v1alpha1.CustomCertificateList{}
		if err := cache.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return errors.Wrap(err, "cannot list CustomCertificates")
		}
		out := make(map[types.NamespacedName]time.Time, len(l.Items))
		for i := range l.Items {
			if na := l.Items[i].Status.NotAfter; na != nil {
				out[client.ObjectKeyFromObject(&l.Items[i])] = na.Time
			}
		}
		m.SetCertificateExpiries(out)
		return nil
	}
}

// SnapshotPolicyRuns reports each VirtualMachineSnapshotPolicy's next and
// last run.
func SnapshotPolicyRuns(m *metrics.Proxmox) Record {
	return func(ctx context.Context, cache client.Reader) error {
		l := &v1alpha1.VirtualMachineSnapshotPolicyList{}
		if err := cache.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return errors.Wrap(err, "cannot list VirtualMachineSnapshotPolicies")
		}
		out := make(map[types.NamespacedName]metrics.SnapshotPolicyRuns, len(l.Items))
		for i := range l.Items {
			var r metrics.SnapshotPolicyRuns
			if st := l.Items[i].Status; st.NextRunTime != nil {
				r.Next = st.NextRunTime.Time
			}
			if st := l.Items[i].Status; st.LastRunTime != nil {
				r.Last = st.LastRunTime.Time
			}
			out[client.ObjectKeyFromObject(&l.Items[i])] = r
		}
		m.SetSnapshotPolicyRuns(out)
		return nil
	}
}
