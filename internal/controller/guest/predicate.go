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

package guest

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
)

// DesiredStateChanged is crossplane-runtime's resource.DesiredStateChanged
// without the annotation writes of a create in progress: Claim storing the
// picked VMID as the external name, and the managed reconciler recording
// the create's success with the create task the external client noted. The reconciler making them requeues the resource
// itself, so reconciling on their watch events only observes a task that has
// just started (two reconciles of the five a clone used to cost).
func DesiredStateChanged() predicate.Predicate {
	return predicate.Or(desiredAnnotationChanged{}, predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{})
}

// desiredAnnotationChanged passes an update whose annotations changed,
// other than by a create in progress.
type desiredAnnotationChanged struct{ predicate.Funcs }

// Update implements predicate.Predicate.
func (desiredAnnotationChanged) Update(e event.UpdateEvent) bool {
	if e.ObjectOld == nil || e.ObjectNew == nil {
		return false
	}
	changed := changedAnnotations(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations())
	delete(changed, meta.AnnotationKeyExternalCreatePending)
	delete(changed, meta.AnnotationKeyExternalCreateFailed)
	return len(changed) > 0 && !byCreate(changed, e.ObjectNew)
}

// byCreate reports whether the changed annotations are what a create
// writes: the external name while the create is in flight, or the create's
// success (with the external name and the create task it may have set).
func byCreate(changed map[string]bool, o metav1.Object) bool {
	for k := range changed {
		switch k {
		case meta.AnnotationKeyExternalName, meta.AnnotationKeyExternalCreateSucceeded, AnnotationCreateTask:
		default:
			return false
		}
	}
	return changed[meta.AnnotationKeyExternalCreateSucceeded] || createInFlight(o)
}

// createInFlight reports whether o's last create attempt has not ended: its
// pending stamp is newer than its success and failure stamps.
func createInFlight(o metav1.Object) bool {
	pending := meta.GetExternalCreatePending(o)
	return !pending.IsZero() && pending.After(meta.GetExternalCreateSucceeded(o)) && pending.After(meta.GetExternalCreateFailed(o))
}

// changedAnnotations returns the keys whose values differ between old and
// updated (added and removed keys included).
func changedAnnotations(old, updated map[string]string) map[string]bool {
	changed := map[string]bool{}
	for k, v := range updated {
		if ov, ok := old[k]; !ok || ov != v {
			changed[k] = true
		}
	}
	for k := range old {
		if _, ok := updated[k]; !ok {
			changed[k] = true
		}
	}
	return changed
}

// ItemRateLimiter is the per-resource backoff of requeues: exponential from
// NotReadyPoll to a minute. crossplane-runtime's starts at one second, and
// the managed reconciler requeues at once after every create: a guest's
// create task (a clone, a download) takes seconds, so looking after one
// second only finds it running.
func ItemRateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](NotReadyPoll, time.Minute)
}
