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

package guest

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

func TestDesiredStateChanged(t *testing.T) {
	const (
		t0 = "2026-12-03T12:00:00Z"
		t1 = "2026-12-03T12:00:01Z"
		t2 = "2026-12-03T12:00:02Z"
	)
	vm := func(generation int64, annotations map[string]string) *v1alpha1.VirtualMachine {
		return &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Generation: generation, Annotations: annotations}}
	}
	cases := map[string]struct {
		reason   string
		old, new *v1alpha1.VirtualMachine
		want     bool
	}{
		"Pending": {
			reason: "The managed reconciler's pending stamp before a create is not a desired change.",
			old:    vm(1, nil), new: vm(1, map[string]string{meta.AnnotationKeyExternalCreatePending: t0}),
			want: false,
		},
		"ClaimedVMID": {
			reason: "Claim storing the picked VMID while the create is in flight is not a desired change.",
			old:    vm(1, map[string]string{meta.AnnotationKeyExternalCreatePending: t0}),
			new:    vm(1, map[string]string{meta.AnnotationKeyExternalCreatePending: t0, meta.AnnotationKeyExternalName: "100"}),
			want:   false,
		},
		"Succeeded": {
			reason: "The success stamp with the create task is written by the reconciler, which requeues itself.",
			old:    vm(1, map[string]string{meta.AnnotationKeyExternalCreatePending: t0, meta.AnnotationKeyExternalName: "100"}),
			new: vm(1, map[string]string{meta.AnnotationKeyExternalCreatePending: t0, meta.AnnotationKeyExternalName: "100",
				meta.AnnotationKeyExternalCreateSucceeded: t1, AnnotationCreateTask: "UPID:pve:1"}),
			want: false,
		},
		"ExternalNameEditedLater": {
			reason: "A user changing the external name after the create ended is a desired change.",
			old:    vm(1, map[string]string{meta.AnnotationKeyExternalCreatePending: t0, meta.AnnotationKeyExternalCreateSucceeded: t1, meta.AnnotationKeyExternalName: "100"}),
			new:    vm(1, map[string]string{meta.AnnotationKeyExternalCreatePending: t0, meta.AnnotationKeyExternalCreateSucceeded: t1, meta.AnnotationKeyExternalName: "200"}),
			want:   true,
		},
		"ExternalNameAfterFailedCreate": {
			reason: "The external name changing after a failed create is not part of a create in flight.",
			old:    vm(1, map[string]string{meta.AnnotationKeyExternalCreatePending: t0, meta.AnnotationKeyExternalCreateFailed: t2}),
			new:    vm(1, map[string]string{meta.AnnotationKeyExternalCreatePending: t0, meta.AnnotationKeyExternalCreateFailed: t2, meta.AnnotationKeyExternalName: "300"}),
			want:   true,
		},
		"OtherAnnotation": {
			reason: "Any other annotation (the reconcile-mode one, a rollback token) is a desired change.",
			old:    vm(1, map[string]string{meta.AnnotationKeyExternalCreatePending: t0}),
			new:    vm(1, map[string]string{meta.AnnotationKeyExternalCreatePending: t0, meta.AnnotationKeyExternalName: "100", "proxmox.alperen.cloud/reconcile-mode": "WatchOnly"}),
			want:   true,
		},
		"Spec": {
			reason: "A new generation is a desired change whatever the annotations.",
			old:    vm(1, nil), new: vm(2, nil),
			want: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DesiredStateChanged().Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})
			if got != tc.want {
				t.Errorf("%s\nUpdate(...) = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
