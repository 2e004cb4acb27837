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

package dependents

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// countingReconciler stands for the managed reconciler behind the gate.
type countingReconciler struct{ calls int }

func (c *countingReconciler) Reconcile(context.Context, reconcile.Request) (reconcile.Result, error) {
	c.calls++
	return reconcile.Result{}, nil
}

func TestGate(t *testing.T) {
	const wait = time.Minute
	down := "cannot read Proxmox VE version: timeout"
	// What the managed reconciler wrote the last time Connect failed.
	notReady := func(reason string) func(*v1alpha1.VirtualMachine) {
		return func(v *v1alpha1.VirtualMachine) {
			v.Spec.ConnectionRef = &v1alpha1.ConnectionReference{Name: "lab"}
			v.Generation = 2
			_, err := failed(reason).Get("lab")
			v.SetConditions(xpv2.ReconcileError(errors.New("connect failed: cannot get a Proxmox VE client: " + err.Error())).WithObservedGeneration(2))
		}
	}
	cases := map[string]struct {
		reason  string
		vm      *v1alpha1.VirtualMachine
		clients *pve.Cache
		want    reconcile.Result
		inner   int
	}{
		"AlreadyReported": {
			reason: "A resource that already reports its connection's current failure waits for the connection.",
			vm:     vm("a", "x", notReady(down)), clients: failed(down),
			want: reconcile.Result{RequeueAfter: wait},
		},
		"NewFailure": {
			reason: "A resource that reports an older failure of its connection is reconciled, to report the new one.",
			vm:     vm("a", "x", notReady("authentication failure")), clients: failed(down),
			inner: 1,
		},
		"FirstFailure": {
			reason: "A resource that does not report the failure yet is reconciled.",
			vm: vm("a", "x", func(v *v1alpha1.VirtualMachine) {
				v.Spec.ConnectionRef = &v1alpha1.ConnectionReference{Name: "lab"}
				v.SetConditions(xpv2.ReconcileSuccess())
			}),
			clients: failed(down), inner: 1,
		},
		"SpecChanged": {
			reason: "A resource whose spec changed since it reported the failure is reconciled.",
			vm: vm("a", "x", func(v *v1alpha1.VirtualMachine) {
				notReady(down)(v)
				v.Generation = 3
			}),
			clients: failed(down), inner: 1,
		},
		"Deleting": {
			reason: "A resource being deleted is reconciled, whatever its connection.",
			vm: vm("a", "x", func(v *v1alpha1.VirtualMachine) {
				notReady(down)(v)
				v.DeletionTimestamp = &metav1.Time{Time: time.Now()}
				v.Finalizers = []string{"test"}
			}),
			clients: failed(down), inner: 1,
		},
		"ConnectionBack": {
			reason:  "A resource whose connection has a client again is reconciled.",
			vm:      vm("a", "x", notReady(down)),
			clients: withClient(t), inner: 1,
		},
		"Gone": {
			reason:  "A resource not in the cache is left to the managed reconciler.",
			clients: failed(down), inner: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := v1alpha1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			b := fake.NewClientBuilder().WithScheme(s)
			if tc.vm != nil {
				b = b.WithObjects(tc.vm)
			}
			inner := &countingReconciler{}
			g := Gate(inner, b.Build(), tc.clients, func() resource.Managed { return &v1alpha1.VirtualMachine{} }, wait)
			got, err := g.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "a", Name: "x"}})
			if err != nil {
				t.Fatalf("%s\nReconcile: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nReconcile: -want, +got:\n%s", tc.reason, diff)
			}
			if inner.calls != tc.inner {
				t.Errorf("%s\nthe managed reconciler ran %d times, want %d", tc.reason, inner.calls, tc.inner)
			}
		})
	}
}

// failed is a cache in which connection "lab" failed for reason.
func failed(reason string) *pve.Cache {
	c := pve.NewCache()
	c.Fail("lab", reason)
	return c
}

// withClient is a cache holding a client for connection "lab" (built, never
// used: no request is made).
func withClient(t *testing.T) *pve.Cache {
	t.Helper()
	cl, err := pve.New(pve.Config{Endpoint: "https://pve.example:8006", TokenID: "root@pam!t", Secret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	c := pve.NewCache()
	c.Store("lab", "gen1", cl)
	return c
}

// blockingReconciler holds every reconcile until release is closed.
type blockingReconciler struct {
	started chan string
	release chan struct{}
}

func (b *blockingReconciler) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	b.started <- req.Name
	<-b.release
	return reconcile.Result{}, nil
}

// A connection's reconciles beyond turnsPerSlot per request slot are put
// back without running, while another connection's still run (a slow
// connection cannot take every worker), and the one put back is woken as
// soon as a turn of its connection frees.
func TestGateTurnsPerConnection(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	on := func(conn string) func(*v1alpha1.VirtualMachine) {
		return func(v *v1alpha1.VirtualMachine) { v.Spec.ConnectionRef = &v1alpha1.ConnectionReference{Name: conn} }
	}
	kube := fake.NewClientBuilder().WithScheme(s).WithObjects(
		vm("a", "slow-1", on("slow")), vm("a", "slow-2", on("slow")), vm("a", "slow-3", on("slow")), vm("a", "fast-1", on("fast")),
	).Build()
	clients := pve.NewCache()
	for _, conn := range []string{"slow", "fast"} {
		cl, err := pve.New(pve.Config{Endpoint: "https://pve.example:8006", TokenID: "root@pam!t", Secret: "s", MaxConcurrentRequests: 1})
		if err != nil {
			t.Fatal(err)
		}
		clients.Store(conn, "gen1", cl)
	}
	inner := &blockingReconciler{started: make(chan string, 4), release: make(chan struct{})}
	g := Gate(inner, kube, clients, func() resource.Managed { return &v1alpha1.VirtualMachine{} }, time.Minute)
	reconcileVM := func(name string) (reconcile.Result, error) {
		return g.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "a", Name: name}})
	}

	done := make(chan error, 3)
	for _, name := range []string{"slow-1", "slow-2", "fast-1"} {
		go func() {
			_, err := reconcileVM(name)
			done <- err
		}()
	}
	for range 3 {
		<-inner.started // 2 turns of "slow" (1 slot), 1 of "fast"
	}
	got, err := reconcileVM("slow-3")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reconcile.Result{RequeueAfter: turnWait}, got); diff != "" {
		t.Errorf("a third reconcile of a 1-slot connection with two running: -want, +got:\n%s", diff)
	}
	if _, err := reconcileVM("slow-3"); err != nil { // put back twice, waits once
		t.Fatal(err)
	}
	if len(g.wake) != 0 {
		t.Fatalf("%d wakeups before any turn freed", len(g.wake))
	}
	close(inner.release)
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if len(g.wake) != 1 {
		t.Fatalf("%d wakeups after the turns freed, want 1 (for slow-3)", len(g.wake))
	}
	if woken := (<-g.wake).Object; woken.GetNamespace() != "a" || woken.GetName() != "slow-3" {
		t.Errorf("woke %s/%s, want a/slow-3", woken.GetNamespace(), woken.GetName())
	}
	if _, err := reconcileVM("slow-3"); err != nil {
		t.Fatal(err)
	}
	if len(inner.started) != 1 {
		t.Errorf("once woken, the put-back reconcile did not run")
	}
}
