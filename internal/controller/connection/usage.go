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

package connection

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// Usage accounting is done here rather than by crossplane-runtime's
// providerconfig.Reconciler: that reconciler replaces the whole status
// (users and conditions) with an update of its own, so two controllers would
// write one status and the Ready condition would flap.

// finalizer blocks deletion of a connection while managed resources use it.
// It is the finalizer crossplane-runtime's provider-config reconciler uses.
const finalizer = "in-use.crossplane.io"

const (
	errListUsages      = "cannot list ProviderConfigUsages"
	errAddFinalizer    = "cannot add the in-use finalizer to ProxmoxConnection"
	errRemoveFinalizer = "cannot remove the in-use finalizer from ProxmoxConnection"
)

// countUsers counts the ProviderConfigUsages, in every namespace, that refer
// to the named connection. crossplane-runtime's usage tracker labels each
// usage with the referenced provider config's name and kind.
func (r *Reconciler) countUsers(ctx context.Context, connection string) (int64, error) {
	l := &v1alpha1.ProviderConfigUsageList{}
	if err := r.kube.List(ctx, l, client.MatchingLabels{
		xpv2.LabelKeyProviderName: connection,
		xpv2.LabelKeyProviderKind: v1alpha1.ProxmoxConnectionKind,
	}); err != nil {
		return 0, errors.Wrap(err, errListUsages)
	}
	return int64(len(l.Items)), nil
}

// reconcileDeletion lets a deleted connection go once nothing uses it. While
// usages remain, the client stays available so the managed resources using it
// can still be deleted, and the status says why the deletion waits; the
// usage watch brings us back when a usage goes away.
func (r *Reconciler) reconcileDeletion(ctx context.Context, log logging.Logger, pc *v1alpha1.ProxmoxConnection, users int64) error {
	if users > 0 {
		orig := pc.DeepCopy()
		msg := fmt.Sprintf("Deletion blocked: %d ProviderConfigUsages still refer to this connection", users)
		pc.SetUsers(users)
		pc.Status.SetConditions(providerconfig.Terminating().WithMessage(msg))
		if orig.Status.GetCondition(providerconfig.TypeTerminating).Message != msg {
			log.Debug("Blocking deletion while in use", "users", users)
			r.record.Event(pc, event.Warning(reasonBlockDeletes, errors.New(msg)))
		}
		return r.patchStatus(ctx, orig, pc)
	}

	r.clients.Remove(pc.GetName())
	if !meta.FinalizerExists(pc, finalizer) {
		return nil
	}
	orig := pc.DeepCopy()
	meta.RemoveFinalizer(pc, finalizer)
	// The optimistic lock keeps finalizers added by others since our read.
	if err := r.kube.Patch(ctx, pc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return errors.Wrap(resource.IgnoreNotFound(err), errRemoveFinalizer)
	}
	log.Debug("Removed in-use finalizer")
	return nil
}

// ensureFinalizer adds the in-use finalizer, so a deletion waits for the
// usages to go.
func (r *Reconciler) ensureFinalizer(ctx context.Context, pc *v1alpha1.ProxmoxConnection) error {
	if meta.FinalizerExists(pc, finalizer) {
		return nil
	}
	orig := pc.DeepCopy()
	meta.AddFinalizer(pc, finalizer)
	err := r.kube.Patch(ctx, pc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	return errors.Wrap(err, errAddFinalizer)
}
