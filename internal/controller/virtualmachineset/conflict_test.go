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

package virtualmachineset

import (
	"context"
	"testing"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis"
	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
)

// TestStatusConflictIsRequeuedNotAnError checks that a status write that
// conflicts (the set changed since it was read, which happens in normal
// operation) reaches controller-runtime as a requeue, not as an error it
// logs at ERROR with a stack trace; and that the bare reconciler does
// return the conflict, so the wrapper is what hides it.
func TestStatusConflictIsRequeuedNotAnError(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	set := &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: v1alpha1.VirtualMachineSetSpec{Replicas: 0, NodeName: "pve", Template: v1alpha1.VirtualMachineCloneSpec{Name: "tpl"}}}
	conflict := func(_ context.Context, _ client.Client, _ string, obj client.Object, _ ...client.SubResourceUpdateOption) error {
		return kerrors.NewConflict(schema.GroupResource{Group: "proxmox.alperen.cloud", Resource: "virtualmachinesets"}, obj.GetName(), nil)
	}
	kube := fake.NewClientBuilder().WithScheme(s).WithObjects(set).WithStatusSubresource(set).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: conflict}).Build()
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(set)}

	res, err := newReconciler(kube, kube, event.NewNopRecorder(), changelog.Recorder{}, nil).Reconcile(context.Background(), req)
	if err != nil || !res.Requeue { //nolint:staticcheck // Requeue is what the wrapper sets
		t.Errorf("as the controller runs it: result %+v, err %v; want a requeue and no error", res, err)
	}
	if _, err := (&Reconciler{kube: kube, record: event.NewNopRecorder()}).Reconcile(context.Background(), req); !kerrors.IsConflict(errors.Cause(err)) {
		t.Errorf("bare reconciler: err %v, want the conflict", err)
	}
}
