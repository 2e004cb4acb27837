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

package admission

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// TestUsageTrackerStoresUsage runs crossplane-runtime's usage tracker on a
// stored VirtualMachine: the usage must land in the VM's namespace, naming
// the connection the VM resolves to.
func TestUsageTrackerStoresUsage(t *testing.T) {
	c := newClient(t)
	ctx := testContext(t)

	vm := &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "tracked", Namespace: "default"},
		Spec: v1alpha1.VirtualMachineSpec{
			Name: "tracked", NodeName: "pve1",
			ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: "conn"}},
			Template:     &v1alpha1.VirtualMachineCloneSpec{Name: "tpl"},
		},
	}
	createAndCleanup(t, c, vm)
	vm.SetGroupVersionKind(v1alpha1.VirtualMachineGroupVersionKind)

	tracker := resource.NewProviderConfigUsageTracker(c, &v1alpha1.ProviderConfigUsage{})
	if err := tracker.Track(ctx, vm); err != nil {
		t.Fatalf("Track(): %v", err)
	}

	usages := &v1alpha1.ProviderConfigUsageList{}
	if err := c.List(ctx, usages, client.InNamespace("default"),
		client.MatchingLabels{xpv2.LabelKeyProviderName: "conn", xpv2.LabelKeyProviderKind: v1alpha1.ProxmoxConnectionKind}); err != nil {
		t.Fatalf("cannot list usages: %v", err)
	}
	if len(usages.Items) != 1 {
		t.Fatalf("found %d usages of connection conn in default, want 1", len(usages.Items))
	}
	u := usages.Items[0]
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.Delete(ctx, &u)
	})
	want := xpv2.TypedProviderConfigUsage{
		ProviderConfigReference: xpv2.ProviderConfigReference{Kind: "ProxmoxConnection", Name: "conn"},
		ResourceReference:       xpv2.TypedReference{APIVersion: "proxmox.alperen.cloud/v1alpha1", Kind: "VirtualMachine", Name: "tracked"},
	}
	if diff := cmp.Diff(want, u.TypedProviderConfigUsage); diff != "" {
		t.Errorf("stored usage: -want, +got:\n%s", diff)
	}
}

// TestConnectionStatusRoundTrips writes a ProxmoxConnection status the way
// the connection controller does and reads it back.
func TestConnectionStatusRoundTrips(t *testing.T) {
	c := newClient(t)
	ctx := testContext(t)

	pc := &v1alpha1.ProxmoxConnection{
		ObjectMeta: metav1.ObjectMeta{Name: "status-roundtrip"},
		Spec: v1alpha1.ProxmoxConnectionSpec{
			Endpoint: "pve.example.com",
			TokenID:  "root@pam!kubemox",
			SecretFrom: &v1alpha1.SecretKeySelector{
				Name: "creds", Namespace: "kubemox", Key: "token",
			},
		},
	}
	createAndCleanup(t, c, pc)

	pc.SetUsers(3)
	pc.SetConditions(xpv2.Available().WithMessage("Proxmox VE 9.1"))
	pc.Status.Version = "9.1.2"
	pc.Status.ObservedSecrets = []v1alpha1.ObservedSecret{{Name: "creds", Namespace: "kubemox", ResourceVersion: "184623"}}
	down := metav1.NewTime(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	pc.Status.Endpoints = []v1alpha1.EndpointStatus{
		{URL: "https://pve.example.com:8006/api2/json", Health: v1alpha1.EndpointDown, Message: "dial tcp 192.0.2.1:8006: connect: connection refused", LastTransitionTime: &down},
		{URL: "https://pve2.example.com:8006/api2/json", Health: v1alpha1.EndpointHealthy, Active: true},
	}
	if err := c.Status().Update(ctx, pc); err != nil {
		t.Fatalf("status update: %v", err)
	}

	got := &v1alpha1.ProxmoxConnection{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pc), got); err != nil {
		t.Fatalf("cannot read back: %v", err)
	}
	if diff := cmp.Diff(pc.Status, got.Status, cmpopts.IgnoreFields(xpv2.Condition{}, "LastTransitionTime")); diff != "" {
		t.Errorf("status after round trip: -want, +got:\n%s", diff)
	}
	if got.GetCondition(xpv2.TypeReady).Reason != v1alpha1.ReasonAvailable {
		t.Errorf("Ready reason = %q, want %q", got.GetCondition(xpv2.TypeReady).Reason, v1alpha1.ReasonAvailable)
	}
	if got.Spec.MaxConcurrentRequests != 4 {
		t.Errorf("spec.maxConcurrentRequests = %d, want the default 4", got.Spec.MaxConcurrentRequests)
	}
}
