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

package guestimport

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis"
	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A 403 reading a selected guest's config is reported for that guest naming the
// privilege and path PVE found missing.
func TestForbiddenNamesThePrivilege(t *testing.T) {
	sim, cl := guesttest.Simulator(t, pvesim.Options{}, "pve")
	if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 100, Config: map[string]string{"name": "web"}}); err != nil {
		t.Fatal(err)
	}
	kube := importKube(t)
	gi := &v1alpha1.GuestImport{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "denied", Generation: 1}}
	if err := kube.Create(context.Background(), gi); err != nil {
		t.Fatal(err)
	}
	sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{Method: "GET", PathPattern: "/nodes/*/qemu/*/pending",
		ErrorRate: 1, Status: 403, Message: "Permission check failed (/vms/100, VM.Audit)"}}})
	r := &Reconciler{kube: kube, fresh: kube, clients: guesttest.DefaultConnection(cl), record: &guesttest.EventLog{}, now: time.Now}
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "denied"}}); err != nil {
		t.Fatal(err)
	}
	if err := kube.Get(context.Background(), client.ObjectKeyFromObject(gi), gi); err != nil {
		t.Fatal(err)
	}
	want := "missing Proxmox VE privilege VM.Audit on /vms/100"
	if len(gi.Status.Guests) != 1 || !strings.HasPrefix(gi.Status.Guests[0].Reason, want) {
		t.Errorf("guests reported %+v; want guest 100 failed with a reason starting %q", gi.Status.Guests, want)
	}
}

// importKube is a fake API server with the guest index the import looks resources up by.
func importKube(t *testing.T) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&v1alpha1.GuestImport{}).
		WithIndex(&v1alpha1.VirtualMachine{}, guest.IndexGuestKey, guestKey).
		WithIndex(&v1alpha1.Container{}, guest.IndexGuestKey, guestKey).Build()
}

// guestKey is the guest index's value of a guest resource, as the provider indexes it.
func guestKey(o client.Object) []string {
	mg, ok := o.(resource.ModernManaged)
	if !ok {
		return nil
	}
	vmid, ok := guest.VMIDOf(meta.GetExternalName(mg))
	if !ok {
		return nil
	}
	return []string{guest.KeyOf(mg.GetProviderConfigReference().Name, vmid)}
}
