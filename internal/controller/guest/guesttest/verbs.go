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

package guesttest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Store creates cr in the (fake) API server, with the create-pending
// annotation the managed reconciler writes before calling Create when
// pending; cr keeps its UID, which the marker is made of.
func Store(t *testing.T, kube client.Client, cr resource.Managed, pending bool) {
	t.Helper()
	if pending {
		meta.SetExternalCreatePending(cr, time.Now())
	}
	uid := cr.GetUID()
	if err := kube.Create(context.Background(), cr); err != nil {
		t.Fatalf("create %s: %v", cr.GetName(), err)
	}
	cr.SetUID(uid)
}

// StoredExternalName is the external name the API server holds for cr.
func StoredExternalName(t *testing.T, kube client.Client, cr resource.Managed) string {
	t.Helper()
	stored, ok := cr.DeepCopyObject().(resource.Managed)
	if !ok {
		t.Fatalf("%T does not copy into a managed resource", cr)
	}
	if err := kube.Get(context.Background(), client.ObjectKeyFromObject(cr), stored); err != nil {
		t.Fatal(err)
	}
	return meta.GetExternalName(stored)
}

// Guest is sim's guest at vmid, failing t without it.
func Guest(t *testing.T, sim *pvesim.Server, vmid int) pvesim.GuestView {
	t.Helper()
	g, ok := sim.Guest(vmid)
	if !ok {
		t.Fatalf("no guest %d", vmid)
	}
	return g
}

// VMIDOf is the VMID cr stores as its external name, failing t without one.
func VMIDOf(t *testing.T, cr resource.Managed) int {
	t.Helper()
	vmid, ok := guest.VMIDOf(meta.GetExternalName(cr))
	if !ok {
		t.Fatalf("external name %q is not a VMID", meta.GetExternalName(cr))
	}
	return vmid
}

// Step drives one reconcile of cr through e the way the managed reconciler
// does (Observe, then Create with the create annotations stored around it,
// or Update); it reports whether cr was already Ready and up to date.
func Step[T resource.Managed](t *testing.T, kube client.Client, e managed.TypedExternalClient[T], cr T) bool {
	t.Helper()
	ctx := context.Background()
	obs, err := e.Observe(ctx, cr)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	switch {
	case !obs.ResourceExists:
		meta.SetExternalCreatePending(cr, time.Now())
		if err := kube.Update(ctx, cr); err != nil {
			t.Fatalf("mark pending: %v", err)
		}
		if _, err := e.Create(ctx, cr); err != nil {
			t.Fatalf("Create: %v", err)
		}
		meta.SetExternalCreateSucceeded(cr, time.Now())
		if err := kube.Update(ctx, cr); err != nil {
			t.Fatalf("persist annotations: %v", err)
		}
	case !obs.ResourceUpToDate:
		if _, err := e.Update(ctx, cr); err != nil {
			t.Fatalf("Update: %v", err)
		}
	case guest.IsReady(cr):
		return true
	}
	// As the managed reconciler does after a successful step.
	cr.SetConditions(xpv2.ReconcileSuccess().WithObservedGeneration(cr.GetGeneration()))
	return false
}

// Want is what one verb call must leave behind, as the verb tables of the
// guest kinds check it.
type Want struct {
	// Reason says what the case shows; it heads every failure.
	Reason string
	// Err is our own error the verb returns, compared with errors.Is; nil
	// (with PVEText "") means no error.
	Err error
	// PVEText is part of Proxmox VE's own message the error must carry:
	// PVE's text has no sentinel to compare with.
	PVEText string
	// Events must all be recorded; NoEvents must not.
	Events, NoEvents []string
	// Secret must appear in no error and no event message ("" = none).
	Secret string
	// Ready is the Ready condition's status ("" = not checked), ReadyMsg a
	// substring of its message.
	Ready    corev1.ConditionStatus
	ReadyMsg string
}

// Check compares what a verb returned and recorded with w.
func (w Want) Check(t *testing.T, log *EventLog, cr resource.Conditioned, err error) {
	t.Helper()
	if w.Err != nil || w.PVEText == "" {
		if diff := cmp.Diff(w.Err, err, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("%s\nerror: -want, +got:\n%s", w.Reason, diff)
		}
	}
	if w.PVEText != "" && (err == nil || !strings.Contains(err.Error(), w.PVEText)) {
		t.Errorf("%s\nerror = %v, want Proxmox VE's %q in it", w.Reason, err, w.PVEText)
	}
	for _, r := range w.Events {
		if !log.Has(r) {
			t.Errorf("%s\nno %s event; events: %v", w.Reason, r, log.Reasons())
		}
	}
	for _, r := range w.NoEvents {
		if log.Has(r) {
			t.Errorf("%s\nunexpected %s event", w.Reason, r)
		}
	}
	if w.Secret != "" && err != nil && strings.Contains(err.Error(), w.Secret) {
		t.Errorf("%s\nthe error carries the secret: %v", w.Reason, err)
	}
	if w.Secret != "" && log.Mentions(w.Secret) {
		t.Errorf("%s\nan event carries the secret", w.Reason)
	}
	if w.Ready != "" {
		c := cr.GetCondition(xpv2.TypeReady)
		if c.Status != w.Ready || !strings.Contains(c.Message, w.ReadyMsg) {
			t.Errorf("%s\nReady = %s (%s %q), want %s containing %q", w.Reason, c.Status, c.Reason, c.Message, w.Ready, w.ReadyMsg)
		}
	}
}
