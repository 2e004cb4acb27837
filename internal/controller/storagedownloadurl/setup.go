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

package storagedownloadurl

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/polling"
)

// DefaultRetryBase is the wait after a first failed download; each further
// failure in a row doubles it, up to MaxRetryWait.
const (
	DefaultRetryBase = 30 * time.Second
	MaxRetryWait     = 30 * time.Minute
)

// ControllerName is the name of the StorageDownloadURL controller.
func ControllerName() string { return managed.ControllerName(v1alpha1.StorageDownloadURLGroupKind) }

// Setup adds the StorageDownloadURL controller to mgr, taking Proxmox
// clients from clients.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache, poll polling.Policy) error {
	recorder := guest.Recorder(mgr, o, ControllerName())
	c := &connector{
		kube:      mgr.GetClient(),
		fresh:     mgr.GetAPIReader(),
		usage:     resource.NewProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
		clients:   clients,
		record:    recorder,
		retryBase: DefaultRetryBase,
	}
	// No initializer: Create names the volume, which follows from the spec.
	return guest.SetupManaged(mgr, o, clients, recorder, guest.ManagedKind[*v1alpha1.StorageDownloadURL]{
		GVK: v1alpha1.StorageDownloadURLGroupVersionKind, Object: &v1alpha1.StorageDownloadURL{}, List: &v1alpha1.StorageDownloadURLList{},
		Polling:   poll,
		Connector: c, PollSoon: pollSoon,
	})
}

// pollSoon reports whether a Ready file is to be observed again within
// seconds: a download (a changed url) or a removal of ours runs.
func pollSoon(mg resource.Managed) bool {
	cr, ok := mg.(*v1alpha1.StorageDownloadURL)
	return ok && guest.TaskUnderway(cr.Status.LastTask)
}

// Proxmox is what the controller asks of Proxmox VE.
type Proxmox interface {
	guest.TaskReader
	guest.TaskLogReader
	StorageVolume(ctx context.Context, node, volid, content string) (pve.Volume, bool, error)
	URLSize(ctx context.Context, node, rawURL string, verifyCertificate *bool) (int64, error)
	DownloadURL(ctx context.Context, d pve.DownloadRequest) (string, error)
	DeleteVolume(ctx context.Context, node, storage, volid string) (string, error)
}

var _ Proxmox = (*pve.Client)(nil)

// connector hands out an external client per reconcile, over the current
// Proxmox client of the resource's connection.
type connector struct {
	kube      client.Reader
	fresh     client.Reader // Namespaces, for the connection's allowedNamespaces
	usage     guest.UsageTracker
	clients   *pve.Cache
	record    event.Recorder
	retryBase time.Duration
}

// Connect implements managed.TypedExternalConnector.
func (c *connector) Connect(ctx context.Context, cr *v1alpha1.StorageDownloadURL) (managed.TypedExternalClient[*v1alpha1.StorageDownloadURL], error) {
	cl, _, err := guest.Connect(ctx, guest.Readers{Kube: c.kube, Fresh: c.fresh}, c.usage, c.clients, cr)
	if err != nil {
		return nil, err
	}
	return guest.Explained[*v1alpha1.StorageDownloadURL]{TypedExternalClient: &external{cl: cl, record: c.record, retryBase: c.retryBase}}, nil
}
