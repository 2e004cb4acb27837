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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// Event reasons.
const (
	reasonVerified     event.Reason = "CredentialsVerified"
	reasonNotVerified  event.Reason = "CredentialsNotVerified"
	reasonBlockDeletes event.Reason = "DeletionBlocked"
)

func ready(pc *v1alpha1.ProxmoxConnection) xpv2.Condition {
	return xpv2.Condition{
		Type:               xpv2.TypeReady,
		Status:             corev1.ConditionTrue,
		Reason:             v1alpha1.ReasonAvailable,
		LastTransitionTime: metav1.Now(),
		ObservedGeneration: pc.GetGeneration(),
	}
}

func notReady(pc *v1alpha1.ProxmoxConnection, reason xpv2.ConditionReason, msg string) xpv2.Condition {
	return xpv2.Condition{
		Type:               xpv2.TypeReady,
		Status:             corev1.ConditionFalse,
		Reason:             reason,
		Message:            msg,
		LastTransitionTime: metav1.Now(),
		ObservedGeneration: pc.GetGeneration(),
	}
}

// failureReason maps an error from the client layer to a Ready reason.
func failureReason(err error) xpv2.ConditionReason {
	switch pve.Classify(err) {
	case pve.AuthenticationFailed:
		return v1alpha1.ReasonAuthenticationFailed
	case pve.EndpointUnreachable:
		return v1alpha1.ReasonEndpointUnreachable
	case pve.TLSVerificationFailed:
		return v1alpha1.ReasonTLSVerificationFailed
	default:
		return xpv2.ReasonUnavailable
	}
}

// recordReadyTransition emits an event when the Ready condition changed
// status or reason between before and after, so repeated verifications of an
// unchanged state stay quiet. Messages come from the status, which never
// holds a credential.
func (r *Reconciler) recordReadyTransition(before, after *v1alpha1.ProxmoxConnection) {
	was := before.Status.GetCondition(xpv2.TypeReady)
	is := after.Status.GetCondition(xpv2.TypeReady)
	if was.Status == is.Status && was.Reason == is.Reason {
		return
	}
	if is.Status == corev1.ConditionTrue {
		r.record.Event(after, event.Normal(reasonVerified, "Proxmox VE accepted the credentials", "version", after.Status.Version))
		return
	}
	r.record.Event(after, event.Warning(reasonNotVerified, errors.Errorf("%s: %s", is.Reason, is.Message)))
}
