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

// Package provider builds the provider's controller manager with every
// controller registered. The provider binary and the integration tests both
// use it, so tests run exactly the wiring that ships.
package provider

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	xpgate "github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"

	"github.com/kubemox/provider-proxmox/apis"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	pxcontroller "github.com/kubemox/provider-proxmox/internal/controller"
	"github.com/kubemox/provider-proxmox/internal/controller/gated"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	pxmetrics "github.com/kubemox/provider-proxmox/internal/metrics"
)

// LeaderElectionID names the Lease replicas of the provider compete for.
const LeaderElectionID = "crossplane-leader-election-provider-proxmox"

const (
	errScheme   = "cannot build the scheme"
	errManager  = "cannot create the controller manager"
	errGate     = "cannot set up the CRD gate"
	errHealthz  = "cannot add the health check"
	errReadyz   = "cannot add the readiness check"
	errRegister = "cannot register managed resource metrics"

	errRegisterProxmox = "cannot register Proxmox VE metrics"
)

// Options configure the provider. Zero values get the defaults of the
// provider binary's flags.
type Options struct {
	// Logger receives every log line of the provider. It is never handed to
	// the Proxmox VE client library, which logs request bodies.
	Logger logr.Logger

	// SyncPeriod is how often informers relist everything.
	SyncPeriod time.Duration
	// PollInterval is how often each resource is checked for drift, and
	// each connection's credentials verified again.
	PollInterval time.Duration
	// MaxReconcileRate is the global number of reconciles per second, and
	// the number of concurrent reconciles of each controller.
	MaxReconcileRate int

	LeaderElection          bool
	LeaderElectionNamespace string
	// LeaseDuration is how long a standby waits, after the leader's last
	// renewal it saw, before it takes over.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew before it
	// gives up leading; it also bounds how long after its last renewal a
	// leader still sends Proxmox VE requests. Shorter than LeaseDuration.
	RenewDeadline time.Duration
	// RetryPeriod is how often the leader renews and a standby tries.
	RetryPeriod time.Duration

	EnableManagementPolicies bool

	// MetricsBindAddress serves Prometheus metrics; "0" disables it.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; "" disables it.
	HealthProbeBindAddress string

	// ClusterID identifies this management cluster in the markers of the
	// guests it creates; empty: the kube-system namespace's UID, when the
	// provider may read it (guest.ClusterIdentity).
	ClusterID string

	// ChangeLogsSocketPath is the unix socket of the change-log service
	// (Crossplane's changelogs sidecar) every create, update and delete is
	// sent to; empty: change logs are off.
	ChangeLogsSocketPath string
	// PollJitterPercentage moves each settled resource's next check by up
	// to this share of its poll interval, either way (0 to 99).
	PollJitterPercentage uint
}

func (o *Options) defaults() {
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = time.Hour
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Minute
	}
	if o.MaxReconcileRate <= 0 {
		o.MaxReconcileRate = 10
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = 60 * time.Second
	}
	if o.RenewDeadline <= 0 {
		o.RenewDeadline = 50 * time.Second
	}
	if o.RetryPeriod <= 0 {
		o.RetryPeriod = 2 * time.Second
	}
	if o.MetricsBindAddress == "" {
		o.MetricsBindAddress = "0"
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
}

// A Provider is the controller manager with every controller registered,
// and the cache of verified Proxmox VE clients they share.
type Provider struct {
	manager.Manager
	Clients *pve.Cache
	// Controllers tells which controllers wait for their CRDs and which
	// failed to start.
	Controllers *gated.Setups
}

// New builds the provider's manager against the API server cfg points at;
// ctx bounds what it reads at start (the cluster identity). Start it with
// Provider.Start.
func New(ctx context.Context, cfg *rest.Config, o Options) (*Provider, error) {
	o.defaults()

	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, errors.Wrap(err, errScheme)
	}
	if err := apis.AddToScheme(s); err != nil {
		return nil, errors.Wrap(err, errScheme)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, errors.Wrap(err, errScheme)
	}

	mo := managerOptions(s, o)
	var fence func() error
	if o.LeaderElection {
		lock, err := newLeaseLock(cfg, o)
		if err != nil {
			return nil, err
		}
		mo.LeaderElectionResourceLockInterface, fence = lock, lock.Check
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return nil, errors.Wrap(err, errManager)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, errors.Wrap(err, errHealthz)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, errors.Wrap(err, errReadyz)
	}

	co, err := controllerOptions(o)
	if err != nil {
		return nil, err
	}
	if co.ChangeLogOptions, err = changeLogOptions(mgr, o); err != nil {
		return nil, err
	}
	gate := &xpgate.Gate[schema.GroupVersionKind]{}
	co.Gate = gate
	if err := customresourcesgate.Setup(mgr, co); err != nil {
		return nil, errors.Wrap(err, errGate)
	}
	setups := gated.New(gate, mgr.GetRESTMapper(), co.Logger)
	if err := mgr.AddReadyzCheck("controllers", setups.Check); err != nil {
		return nil, errors.Wrap(err, errReadyz)
	}
	pm, err := pxmetrics.NewProxmox(metrics.Registry)
	if err != nil {
		return nil, errors.Wrap(err, errRegisterProxmox)
	}
	poll, err := pollPolicy(o)
	if err != nil {
		return nil, err
	}
	clients := pve.NewCache(pve.WithMetrics(pm), pve.WithFence(fence))
	cluster, err := clusterIdentity(ctx, mgr, o)
	if err != nil {
		return nil, err
	}
	if err := pxcontroller.SetupGated(mgr, co, clients, setups, cluster, poll); err != nil {
		return nil, err
	}
	return &Provider{Manager: mgr, Clients: clients, Controllers: setups}, nil
}

// managerOptions keeps Secrets out of every cache. The manager's client
// reads Secrets straight from the API server (a cached read would start a
// cluster-wide informer holding every Secret's data); changes are seen by
// secrets.Watch, which keeps no Secret at all.
//
// The CRD gate watches every CRD in the cluster; its cache keeps them without
// their OpenAPI schemas (by far their largest part), so hundreds of unrelated
// CRDs cost little memory.
//
// No cached object keeps its managed fields: nothing here reads them, they
// were about a third of each cached managed resource and of its
// ProviderConfigUsage, and an update that omits them leaves the API
// server's copy as it is.
func managerOptions(s *runtime.Scheme, o Options) manager.Options {
	return manager.Options{
		Scheme: s,
		Logger: o.Logger,
		Cache: cache.Options{
			SyncPeriod:       &o.SyncPeriod,
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject: map[client.Object]cache.ByObject{
				&apiextensionsv1.CustomResourceDefinition{}: {Transform: customresourcesgate.TransformStripCRDSchema},
			},
		},
		Client: client.Options{
			Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}},
		},
		Metrics:                    metricsserver.Options{BindAddress: o.MetricsBindAddress},
		HealthProbeBindAddress:     o.HealthProbeBindAddress,
		LeaderElection:             o.LeaderElection,
		LeaderElectionID:           LeaderElectionID,
		LeaderElectionNamespace:    o.LeaderElectionNamespace,
		LeaderElectionResourceLock: resourcelock.LeasesResourceLock,
		LeaseDuration:              &o.LeaseDuration,
		RenewDeadline:              &o.RenewDeadline,
		RetryPeriod:                &o.RetryPeriod,
		// The binary exits as soon as the manager stops, so releasing the
		// lease on a graceful stop is safe, and lets the standby take over
		// at once instead of after LeaseDuration.
		LeaderElectionReleaseOnCancel: true,
	}
}

// controllerOptions are the crossplane-runtime options every controller
// gets.
func controllerOptions(o Options) (controller.Options, error) {
	features := &feature.Flags{}
	if o.EnableManagementPolicies {
		features.Enable(feature.EnableBetaManagementPolicies)
	}

	mrMetrics := managed.NewMRMetricRecorder()
	stateMetrics := statemetrics.NewMRStateMetrics()
	for _, c := range []prometheus.Collector{mrMetrics, stateMetrics} {
		if err := registerMetrics(c); err != nil {
			return controller.Options{}, errors.Wrap(err, errRegister)
		}
	}

	return controller.Options{
		Logger:                  logging.NewLogrLogger(o.Logger.WithName("provider-proxmox")),
		GlobalRateLimiter:       ratelimiter.NewGlobal(o.MaxReconcileRate),
		PollInterval:            o.PollInterval,
		MaxConcurrentReconciles: o.MaxReconcileRate,
		Features:                features,
		MetricOptions: &controller.MetricOptions{
			PollStateMetricInterval: 5 * time.Second,
			MRMetrics:               mrMetrics,
			MRStateMetrics:          stateMetrics,
		},
	}, nil
}

// registerMetrics registers c with controller-runtime's registry. A second
// provider in the same process (tests) keeps the first one's collectors.
func registerMetrics(c prometheus.Collector) error {
	err := metrics.Registry.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		return nil
	}
	return err
}

// clusterIDTimeout bounds reading the cluster identity at start.
const clusterIDTimeout = 30 * time.Second

// clusterIdentity is this management cluster's identity in markers, read
// once at start (guest.ClusterIdentity); it says in the log which one.
func clusterIdentity(ctx context.Context, mgr ctrl.Manager, o Options) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, clusterIDTimeout)
	defer cancel()
	id, err := guest.ClusterIdentity(ctx, mgr.GetAPIReader(), o.ClusterID)
	if err != nil {
		return "", err
	}
	if id == "" {
		o.Logger.Info("No management cluster identity: set --cluster-id, or let the provider get the kube-system namespace. Markers name no cluster, so a guest whose resource was orphaned and applied again is adopted only with the ProxmoxConnection's adoption opt-in")
		return "", nil
	}
	o.Logger.Info("Management cluster identity", "cluster-id", id)
	return id, nil
}
