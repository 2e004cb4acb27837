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

package providertest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Conditioned is a resource with Crossplane conditions.
type Conditioned interface {
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

// ReadyAndSynced reports whether c is Ready and Synced.
func ReadyAndSynced(c Conditioned) bool {
	return c.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue &&
		c.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue
}

// VMIDOf is the VMID a guest-backed resource stores as its external name,
// failing t when it holds none.
func VMIDOf(t testing.TB, mg resource.Managed) int {
	t.Helper()
	id, err := strconv.Atoi(meta.GetExternalName(mg))
	if err != nil {
		t.Fatalf("external name %q is not a VMID", meta.GetExternalName(mg))
	}
	return id
}

// MarkedGuests are sim's guests whose description carries the ownership
// marker of the resource ns/name.
func MarkedGuests(sim *pvesim.Server, ns, name string) []pvesim.GuestView {
	mark := "crossplane: " + ns + "/" + name + " uid="
	var out []pvesim.GuestView
	for _, g := range sim.Guests() {
		if strings.Contains(g.Config["description"], mark) {
			out = append(out, g)
		}
	}
	return out
}

// FreeVMID is the first VMID from start on which sim has no guest, for
// tests that seed one: the simulator outlives a run, and -count=2 finds the
// first run's guests.
func FreeVMID(t testing.TB, sim *pvesim.Server, start int) int {
	t.Helper()
	for id := start; id < start+1000; id++ {
		if _, taken := sim.Guest(id); !taken {
			return id
		}
	}
	t.Fatalf("no free VMID in [%d, %d)", start, start+1000)
	return 0
}

// Events are the events recorded in ns, about the object name (any object
// when name is "").
func (h *Harness) Events(t testing.TB, ns, name string) []corev1.Event {
	t.Helper()
	l := &corev1.EventList{}
	if err := h.Kube.List(context.Background(), l, client.InNamespace(ns)); err != nil {
		t.Fatalf("list events: %v", err)
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if name == "" || e.InvolvedObject.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// WaitEvent waits for an event with reason about ns/name and returns it.
func (h *Harness) WaitEvent(t testing.TB, ns, name, reason string, timeout time.Duration) corev1.Event {
	t.Helper()
	var found corev1.Event
	Eventually(t, timeout, 250*time.Millisecond, func() bool {
		for _, e := range h.Events(t, ns, name) {
			if e.Reason == reason {
				found = e
				return true
			}
		}
		return false
	}, func() string {
		return fmt.Sprintf("no %s event for %s/%s after %s", reason, ns, name, timeout)
	})
	return found
}

// DeleteAndWait deletes obj and waits until the API server no longer has
// it.
func (h *Harness) DeleteAndWait(t testing.TB, obj client.Object, timeout time.Duration) {
	t.Helper()
	if err := h.Kube.Delete(context.Background(), obj); err != nil && !kerrors.IsNotFound(err) {
		t.Fatalf("delete %s/%s: %v", obj.GetNamespace(), obj.GetName(), err)
	}
	h.WaitGone(t, obj, timeout)
}
