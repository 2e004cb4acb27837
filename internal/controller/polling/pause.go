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

package polling

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpevent "github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

const reasonPaused xpevent.Reason = "ReconciliationPaused"

// Object is a kind with its own reconciler that reports a pause in its
// Synced condition, as managed resources do.
type Object interface {
	client.Object
	resource.Conditioned
}

// UnlessPaused runs r unless the object the request names carries
// crossplane.io/paused: "true". A paused object is left as it is (nothing
// created, updated or deleted for it, its finalizer kept) and reports
// Synced False, ReconcilePaused; once the annotation goes it reports Synced
// True again and r runs. The controller must reconcile on annotation changes
// (PauseChanged, or any update) for the resume to be seen.
func UnlessPaused(kube client.Client, newObject func() Object, record xpevent.Recorder, r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		o := newObject()
		if err := kube.Get(ctx, req.NamespacedName, o); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		synced := o.GetCondition(xpv2.TypeSynced)
		paused := meta.IsPaused(o)
		switch {
		case paused && synced.Reason == xpv2.ReasonReconcilePaused:
			return reconcile.Result{}, nil
		case paused:
			o.SetConditions(xpv2.ReconcilePaused())
			record.Event(o, xpevent.Normal(reasonPaused, "Reconciliation is paused by the "+meta.AnnotationKeyReconciliationPaused+" annotation"))
			return reconcile.Result{}, errors.Wrap(kube.Status().Update(ctx, o), "cannot report the pause")
		case synced.Status == corev1.ConditionFalse && synced.Reason == xpv2.ReasonReconcilePaused:
			// Resumed. r reads the object again; should its cache not hold
			// this write yet, its own write conflicts and is retried.
			o.SetConditions(xpv2.ReconcileSuccess())
			if err := kube.Status().Update(ctx, o); err != nil {
				return reconcile.Result{}, errors.Wrap(err, "cannot report the resume")
			}
		}
		return r.Reconcile(ctx, req)
	})
}

// PauseChanged passes the updates that add or remove the pause, for
// controllers that otherwise watch only spec changes.
func PauseChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld != nil && e.ObjectNew != nil && meta.IsPaused(e.ObjectOld) != meta.IsPaused(e.ObjectNew)
		},
	}
}
