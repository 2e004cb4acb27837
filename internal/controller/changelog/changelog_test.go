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

package changelog

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	changelogs "github.com/crossplane/crossplane-runtime/v2/apis/changelogs/proto/v1alpha1"
	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// kept is a change logger that keeps what it is given.
type kept struct {
	kinds   []string
	ops     []changelogs.OperationType
	details []managed.AdditionalDetails
}

func (k *kept) Log(_ context.Context, mg resource.Managed, op changelogs.OperationType, _ error, ad managed.AdditionalDetails) error {
	k.kinds = append(k.kinds, mg.GetObjectKind().GroupVersionKind().String())
	k.ops = append(k.ops, op)
	k.details = append(k.details, ad)
	return nil
}

// An own reconciler's entry names the managed resource's kind (a typed
// object built in code carries none) and who made the change; the object
// handed in is left as it was.
func TestRecord(t *testing.T) {
	logger := &kept{}
	r := NewRecorder(controller.Options{ChangeLogOptions: &controller.ChangeLogOptions{ChangeLogger: logger}}, v1alpha1.VirtualMachineSetKind)
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0"}}
	set := &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	r.Record(context.Background(), vm, v1alpha1.VirtualMachineGroupVersionKind, Create, nil, set)

	want := kept{
		kinds:   []string{v1alpha1.VirtualMachineGroupVersionKind.String()},
		ops:     []changelogs.OperationType{Create},
		details: []managed.AdditionalDetails{{DetailReconciler: "VirtualMachineSet", DetailOwner: "ns/web"}},
	}
	if diff := cmp.Diff(want, *logger, cmp.AllowUnexported(kept{})); diff != "" {
		t.Errorf("Record: -want +got:\n%s", diff)
	}
	if !vm.GetObjectKind().GroupVersionKind().Empty() {
		t.Errorf("Record set the kind of the object handed in: %v", vm.GetObjectKind().GroupVersionKind())
	}
}

// With change logs off the recorder is the zero one, which sends nothing.
func TestRecordOff(t *testing.T) {
	for name, o := range map[string]controller.Options{
		"NoOptions": {},
		"NoLogger":  {ChangeLogOptions: &controller.ChangeLogOptions{}},
	} {
		if r := NewRecorder(o, v1alpha1.GuestImportKind); r != (Recorder{}) {
			t.Errorf("%s: NewRecorder = %+v, want the zero Recorder", name, r)
		}
	}
	Recorder{}.Record(context.Background(), &v1alpha1.VirtualMachine{}, v1alpha1.VirtualMachineGroupVersionKind, Delete, nil, &v1alpha1.GuestImport{})
}

// Details name fields and external names, and are left out when there is
// nothing to say.
func TestDetails(t *testing.T) {
	named := &v1alpha1.VirtualMachine{}
	meta.SetExternalName(named, "104")
	cases := map[string]struct {
		reason string
		got    managed.AdditionalDetails
		want   managed.AdditionalDetails
	}{
		"Fields":        {reason: "An update names the fields it wrote.", got: Fields([]string{"cores", "net0"}), want: managed.AdditionalDetails{DetailFields: "cores,net0"}},
		"NoFields":      {reason: "An update that wrote no field says nothing.", got: Fields(nil), want: nil},
		"Created":       {reason: "A creation names the VMID it picked.", got: Created(named), want: managed.AdditionalDetails{DetailExternalName: "104"}},
		"NotCreatedYet": {reason: "A creation that picked no VMID says nothing.", got: Created(&v1alpha1.VirtualMachine{}), want: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
