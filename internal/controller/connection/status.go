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
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// endpointEventBuffer is deep enough for every connection's endpoints to
// change at once a few times over.
const endpointEventBuffer = 256

// Event reasons.
const (
	reasonVerified     event.Reason = "CredentialsVerified"
	reasonNotVerified  event.Reason = "CredentialsNotVerified"
	reasonBlockDeletes event.Reason = "DeletionBlocked"
	reasonDegraded     event.Reason = "EndpointsDown"
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

// degraded is Ready with the endpoints that are down named: requests go to
// the others. Messages are the client's transport errors, which hold no
// credential.
func degraded(pc *v1alpha1.ProxmoxConnection, down []string) xpv2.Condition {
	c := ready(pc)
	c.Reason = v1alpha1.ReasonDegraded
	c.Message = fmt.Sprintf("%d of %d endpoints down, requests go to the others: %s", len(down), len(pc.Status.Endpoints), strings.Join(down, "; "))
	return c
}

// readyCondition is Ready, Degraded while some endpoints are down.
func readyCondition(pc *v1alpha1.ProxmoxConnection) xpv2.Condition {
	var down []string
	for _, e := range pc.Status.Endpoints {
		if e.Health != v1alpha1.EndpointHealthy {
			down = append(down, fmt.Sprintf("%s (%s)", e.URL, e.Message))
		}
	}
	if len(down) == 0 {
		return ready(pc)
	}
	return degraded(pc, down)
}

// endpointStatus is the status of the client's endpoints. A transition time
// is kept from the previous status while the health is unchanged and the
// client has none of its own (a new client starts out healthy).
func endpointStatus(prev []v1alpha1.EndpointStatus, states []pve.EndpointState, redact func(string) string) []v1alpha1.EndpointStatus {
	out := make([]v1alpha1.EndpointStatus, 0, len(states))
	for _, st := range states {
		e := v1alpha1.EndpointStatus{URL: st.URL, Health: v1alpha1.EndpointDown, Active: st.Active, Message: redact(st.Message)}
		if st.Healthy {
			e.Health, e.Message = v1alpha1.EndpointHealthy, ""
		}
		if !st.Since.IsZero() {
			t := metav1.NewTime(st.Since.Truncate(time.Second))
			e.LastTransitionTime = &t
		}
		for _, p := range prev {
			if p.URL == e.URL && p.Health == e.Health && e.LastTransitionTime == nil {
				e.LastTransitionTime = p.LastTransitionTime
			}
		}
		out = append(out, e)
	}
	return out
}

// endpointChanged returns the callback a connection's client calls when an
// endpoint went down or came back: it asks for a reconcile of the
// connection, without blocking the client (a full buffer drops the event;
// the next poll catches up).
func (r *Reconciler) endpointChanged(name string) func() {
	return func() {
		obj := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: name}}
		select {
		case r.endpointEvents <- ctrlevent.GenericEvent{Object: obj}:
		default:
		}
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
	if is.Status == corev1.ConditionTrue && is.Reason == v1alpha1.ReasonDegraded {
		r.record.Event(after, event.Warning(reasonDegraded, errors.New(is.Message)))
		return
	}
	if is.Status == corev1.ConditionTrue {
		r.record.Event(after, event.Normal(reasonVerified, "Proxmox VE accepted the credentials", "version", after.Status.Version))
		return
	}
	r.record.Event(after, event.Warning(reasonNotVerified, errors.Errorf("%s: %s", is.Reason, is.Message)))
}

// endpointHealths are the healths the metrics report for every connection,
// 0 when no endpoint has it.
func endpointHealths() []string {
	return []string{string(v1alpha1.EndpointHealthy), string(v1alpha1.EndpointDown)}
}

// endpointsByHealth counts a connection's reported endpoints by health.
func endpointsByHealth(eps []v1alpha1.EndpointStatus) map[string]int {
	out := make(map[string]int, 2)
	for _, e := range eps {
		out[string(e.Health)]++
	}
	return out
}
