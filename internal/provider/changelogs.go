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

package provider

import (
	"context"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	changelogs "github.com/crossplane/crossplane-runtime/v2/apis/changelogs/proto/v1alpha1"
	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/internal/controller/polling"
	pxmetrics "github.com/kubemox/provider-proxmox/internal/metrics"
	"github.com/kubemox/provider-proxmox/internal/version"
)

// changeLogOptions connects to the change-log service on o's socket, as
// provider-kubernetes and the Upjet providers do: plaintext gRPC over a unix
// socket shared with the sidecar in the pod, never over the network. The
// connection is made lazily (an entry waits for the sidecar) and closed
// when the manager stops. Nil when change logs are off.
func changeLogOptions(mgr manager.Manager, o Options) (*controller.ChangeLogOptions, error) {
	if o.ChangeLogsSocketPath == "" {
		return nil, nil
	}
	path, err := filepath.Abs(o.ChangeLogsSocketPath)
	if err != nil {
		return nil, errors.Wrap(err, "cannot resolve the change logs socket path")
	}
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, errors.Wrap(err, "cannot create the change logs client")
	}
	if err := mgr.Add(closeOnStop{conn: conn}); err != nil {
		return nil, errors.Wrap(err, "cannot add the change logs client to the manager")
	}
	logger := managed.NewGRPCChangeLogger(changelogs.NewChangeLogServiceClient(conn),
		managed.WithProviderVersion("provider-proxmox:"+version.Version))
	return &controller.ChangeLogOptions{ChangeLogger: logger}, nil
}

// pollPolicy is how the checks of settled resources are spaced and
// recorded.
func pollPolicy(o Options) (polling.Policy, error) {
	if o.PollJitterPercentage > polling.MaxJitterPercentage {
		return polling.Policy{}, errors.Errorf("poll jitter percentage %d is above %d", o.PollJitterPercentage, polling.MaxJitterPercentage)
	}
	m, err := pxmetrics.NewPoll(metrics.Registry)
	if err != nil {
		return polling.Policy{}, errors.Wrap(err, errRegisterProxmox)
	}
	return polling.Policy{JitterPercentage: o.PollJitterPercentage, Metrics: m}, nil
}

// closeOnStop closes a connection when the manager stops, leader or not.
type closeOnStop struct{ conn *grpc.ClientConn }

func (c closeOnStop) Start(ctx context.Context) error {
	<-ctx.Done()
	return errors.Wrap(c.conn.Close(), "cannot close the change logs client")
}

func (closeOnStop) NeedLeaderElection() bool { return false }
