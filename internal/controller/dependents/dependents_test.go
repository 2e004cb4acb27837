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
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

func vm(ns, name string, set func(*v1alpha1.VirtualMachine)) *v1alpha1.VirtualMachine {
	v := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if set != nil {
		set(v)
	}
	return v
}

func TestConnectionOf(t *testing.T) {
	cases := map[string]struct {
		vm   *v1alpha1.VirtualMachine
		want string
	}{
		"ConnectionRef": {vm("a", "x", func(v *v1alpha1.VirtualMachine) {
			v.Spec.ConnectionRef = &v1alpha1.ConnectionReference{Name: "lab"}
		}), "lab"},
		"ProviderConfigRef": {vm("a", "x", func(v *v1alpha1.VirtualMachine) {
			v.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: v1alpha1.ProxmoxConnectionKind, Name: "prod"}
		}), "prod"},
		"Default": {vm("a", "x", nil), v1alpha1.DefaultConnectionName},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ConnectionOf(tc.vm); got != tc.want {
				t.Errorf("ConnectionOf = %q, want %q", got, tc.want)
			}
		})
	}
}

// A snapshot naming a VirtualMachine but no connection resolves to the
// default one until it reports going through the guest's connection.
func TestConnectionOfUsedConnection(t *testing.T) {
	snap := &v1alpha1.VirtualMachineSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "s"}}
	if got := ConnectionOf(snap); got != v1alpha1.DefaultConnectionName {
		t.Errorf("before it used one: ConnectionOf = %q, want %q", got, v1alpha1.DefaultConnectionName)
	}
	snap.Status.ConnectionName = "lab"
	if got := ConnectionOf(snap); got != "lab" {
		t.Errorf("after going through lab: ConnectionOf = %q, want lab", got)
	}
}

// The enqueuer finds, across namespaces, exactly the resources resolving to
// the connection whose client was replaced.
func TestEnqueuer(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	useLab := func(v *v1alpha1.VirtualMachine) { v.Spec.ConnectionRef = &v1alpha1.ConnectionReference{Name: "lab"} }
	kube := fake.NewClientBuilder().WithScheme(s).
		WithIndex(&v1alpha1.VirtualMachine{}, IndexConnection, indexValue).
		WithObjects(vm("a", "one", useLab), vm("b", "two", useLab), vm("a", "other", nil)).
		Build()

	conn := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: "lab"}}
	got := Enqueuer(kube, &v1alpha1.VirtualMachineList{})(context.Background(), conn)
	sort.Slice(got, func(i, j int) bool { return got[i].String() < got[j].String() })
	want := []reconcile.Request{
		{NamespacedName: namespacedName("a", "one")},
		{NamespacedName: namespacedName("b", "two")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

func TestItemOf(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	o, err := itemOf(&v1alpha1.VirtualMachineList{}, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := o.(*v1alpha1.VirtualMachine); !ok {
		t.Errorf("itemOf(VirtualMachineList) = %T, want *VirtualMachine", o)
	}
}

func namespacedName(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}
