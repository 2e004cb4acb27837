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

// Command provider runs the Crossplane provider for Proxmox VE, in a cluster
// or outside it with KUBECONFIG.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/version"
)

// flags are the command line of the provider.
type flags struct {
	debug                    bool
	syncPeriod               time.Duration
	pollInterval             time.Duration
	maxReconcileRate         int
	leaderElection           bool
	leaderElectionNamespace  string
	leaseDuration            time.Duration
	renewDeadline            time.Duration
	retryPeriod              time.Duration
	enableManagementPolicies bool
	metricsBindAddress       string
	healthProbeBindAddress   string
	clusterID                string
	enableChangeLogs         bool
	changeLogsSocketPath     string
	pollJitterPercentage     uint
}

func parseFlags(args []string) (flags, error) {
	var f flags
	app := kingpin.New(filepath.Base(os.Args[0]), "Crossplane provider for Proxmox VE.").DefaultEnvars()
	app.Version(version.Version)
	app.Flag("debug", "Run with debug logging.").Short('d').BoolVar(&f.debug)
	app.Flag("sync", "How often all resources are listed again from the API server.").Short('s').Default("1h").DurationVar(&f.syncPeriod)
	app.Flag("poll", "How often each resource is checked for drift, and each connection's credentials verified.").Default("1m").DurationVar(&f.pollInterval)
	app.Flag("poll-jitter-percentage", "Percentage of its poll interval by which each resource's next check moves either way, so checks spread out; 0 to 99.").Default("10").UintVar(&f.pollJitterPercentage)
	app.Flag("max-reconcile-rate", "The global maximum rate per second at which resources may be checked for drift.").Default("10").IntVar(&f.maxReconcileRate)
	app.Flag("leader-election", "Use leader election for the controller manager.").Short('l').Default("false").Envar("LEADER_ELECTION").BoolVar(&f.leaderElection)
	app.Flag("leader-election-namespace", "Namespace of the leader election Lease; needed outside a cluster.").StringVar(&f.leaderElectionNamespace)
	app.Flag("leader-election-lease-duration", "How long a standby replica waits after the leader's last renewal before it takes over.").Default("60s").DurationVar(&f.leaseDuration)
	app.Flag("leader-election-renew-deadline", "How long the leader tries to renew its lease before it stops leading; it sends no Proxmox VE request once its last renewal is older. Shorter than the lease duration.").Default("50s").DurationVar(&f.renewDeadline)
	app.Flag("leader-election-retry-period", "How often the leader renews its lease and a standby tries to take it.").Default("2s").DurationVar(&f.retryPeriod)
	app.Flag("enable-management-policies", "Enable support for management policies.").Default("true").Envar("ENABLE_MANAGEMENT_POLICIES").BoolVar(&f.enableManagementPolicies)
	app.Flag("metrics-bind-address", "Address the Prometheus metrics endpoint binds to; 0 disables it.").Default(":8080").StringVar(&f.metricsBindAddress)
	app.Flag("health-probe-bind-address", "Address the health probe endpoints bind to.").Default(":8081").StringVar(&f.healthProbeBindAddress)
	app.Flag("cluster-id", "Identity of this management cluster in the markers of the guests it creates; default: the UID of the kube-system namespace when the provider may read it.").StringVar(&f.clusterID)
	app.Flag("enable-changelogs", "Send an entry for every change made to a resource to the change logs service (Crossplane's changelogs sidecar).").Default("false").Envar("ENABLE_CHANGELOGS").BoolVar(&f.enableChangeLogs)
	app.Flag("changelogs-socket-path", "Unix socket of the change logs service.").Default("/var/run/changelogs/changelogs.sock").Envar("CHANGELOGS_SOCKET_PATH").StringVar(&f.changeLogsSocketPath)
	_, err := app.Parse(args)
	return f, err
}

// changeLogsSocket is the change logs socket, empty when change logs are
// off.
func (f flags) changeLogsSocket() string {
	if !f.enableChangeLogs {
		return ""
	}
	return f.changeLogsSocketPath
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "provider-proxmox:", err)
		os.Exit(1)
	}
}

// defaultGCPercent is the provider's GC target unless GOGC says otherwise.
// Its live heap is small (about 22 MiB with 2,000 VirtualMachines: informer
// caches, schemes, the event correlator) next to the binary's 38 MiB of code
// and tables, and Go's default (GOGC=100) lets the heap grow to twice the
// live part before collecting. 50 keeps the resident set about 10 MiB lower
// at 2,000 VMs for about 6% more CPU (docs/guides/performance.md).
const defaultGCPercent = 50

// setGCPercent applies defaultGCPercent unless the GOGC environment variable
// is set, and returns the GC target in effect ("off" included).
func setGCPercent() string {
	if v, ok := os.LookupEnv("GOGC"); ok {
		return v
	}
	debug.SetGCPercent(defaultGCPercent)
	return strconv.Itoa(defaultGCPercent)
}

func run(args []string) error {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	gcPercent := setGCPercent()

	zl := zap.New(zap.UseDevMode(f.debug))
	ctrl.SetLogger(zl)
	klog.SetLogger(zl)

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("cannot load the kubeconfig (in-cluster, KUBECONFIG or ~/.kube/config): %w", err)
	}

	ctx := ctrl.SetupSignalHandler()
	p, err := provider.New(ctx, cfg, provider.Options{
		Logger:                   zl,
		SyncPeriod:               f.syncPeriod,
		PollInterval:             f.pollInterval,
		MaxReconcileRate:         f.maxReconcileRate,
		LeaderElection:           f.leaderElection,
		LeaderElectionNamespace:  f.leaderElectionNamespace,
		LeaseDuration:            f.leaseDuration,
		RenewDeadline:            f.renewDeadline,
		RetryPeriod:              f.retryPeriod,
		EnableManagementPolicies: f.enableManagementPolicies,
		MetricsBindAddress:       f.metricsBindAddress,
		HealthProbeBindAddress:   f.healthProbeBindAddress,
		ClusterID:                f.clusterID,
		ChangeLogsSocketPath:     f.changeLogsSocket(),
		PollJitterPercentage:     f.pollJitterPercentage,
	})
	if err != nil {
		return err
	}
	zl.Info("Starting provider-proxmox", "version", version.Version, "sync", f.syncPeriod, "poll", f.pollInterval,
		"poll-jitter-percentage", f.pollJitterPercentage, "changelogs", f.enableChangeLogs, "max-reconcile-rate", f.maxReconcileRate, "management-policies", f.enableManagementPolicies, "gogc", gcPercent)
	return p.Start(ctx)
}
