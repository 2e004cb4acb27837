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

package virtualmachinesnapshot

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// rollbackProxmox is a guest with lock (none when "") whose rollback
// requests are answered with upid and err, and recorded.
type rollbackProxmox struct {
	proxmox
	lock  string
	upid  string
	err   error
	calls []string
}

func (f *rollbackProxmox) GuestStatus(context.Context, pve.GuestRef) (pve.GuestStatus, error) {
	return pve.GuestStatus{Status: "running", Lock: f.lock}, nil
}

func (f *rollbackProxmox) RollbackSnapshot(_ context.Context, _ pve.GuestRef, name string) (string, error) {
	f.calls = append(f.calls, "rollback to "+name)
	return f.upid, f.err
}

// rollbackResult is what a rollback left behind: the requests, the token
// taken and its task (as the stored resource shows the token), the events.
type rollbackResult struct {
	calls       []string
	token       string
	storedToken string
	task        *v1alpha1.TaskStatus
	events      []string
	err         error
}

// TestRollbackWithFake covers how Update spends a rollback token: taken and
// stored before PVE is asked, so one token never rolls back twice, and
// given back only when PVE was not asked or refused before starting.
func TestRollbackWithFake(t *testing.T) {
	errBoom := errors.New("boom")
	cases := map[string]struct {
		reason string
		cl     *rollbackProxmox
		want   rollbackResult
	}{
		"Started": {
			reason: "The token is stored, then the rollback task recorded for Observe to follow, with an event.",
			cl:     &rollbackProxmox{upid: "UPID:3"},
			want: rollbackResult{calls: []string{"rollback to pre"}, token: "t1", storedToken: "t1",
				task: &v1alpha1.TaskStatus{UPID: "UPID:3", Status: guest.TaskRunning}, events: []string{string(reasonRollingBack)}},
		},
		"GuestLocked": {
			reason: "A guest locked now (a backup) keeps the token for the next poll; PVE is not asked.",
			cl:     &rollbackProxmox{lock: "backup"},
		},
		"PVEAnswersLocked": {
			reason: "A rollback PVE refuses as locked gives the token back for the next poll, without an error.",
			cl:     &rollbackProxmox{err: errors.New("VM 700 is locked (backup)")},
			want:   rollbackResult{calls: []string{"rollback to pre"}, storedToken: "t1"},
		},
		"Refused": {
			reason: "Any other refusal spends the token: the task is recorded as failed with PVE's answer.",
			cl:     &rollbackProxmox{err: errBoom},
			want: rollbackResult{calls: []string{"rollback to pre"}, token: "t1", storedToken: "t1",
				task: &v1alpha1.TaskStatus{Type: "qmrollback", Status: guest.TaskStopped, ExitStatus: "boom"}, err: errBoom},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			kube := guesttest.FakeKube(t, &v1alpha1.VirtualMachineSnapshot{})
			cr := &v1alpha1.VirtualMachineSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pre"},
				Spec: v1alpha1.VirtualMachineSnapshotSpec{Description: "before upgrade"}}
			meta.SetExternalName(cr, "pre")
			meta.AddAnnotations(cr, map[string]string{v1alpha1.AnnotationRollback: "t1"})
			if err := kube.Create(ctx, cr); err != nil {
				t.Fatal(err)
			}
			log := &guesttest.EventLog{}
			e := &external{kube: kube, cl: tc.cl, record: log, obs: observation{snap: &pve.Snapshot{Name: "pre", Description: "before upgrade"}},
				target: target{ref: pve.GuestRef{Type: pve.QEMU, Node: "pve", VMID: 700}, what: "VirtualMachine web"}}
			_, err := e.Update(ctx, cr)
			got := rollbackResult{calls: tc.cl.calls, events: log.Reasons(), err: err}
			if rb := cr.Status.Rollback; rb != nil {
				got.token, got.task = rb.Token, rb.Task
			}
			stored := &v1alpha1.VirtualMachineSnapshot{}
			if err := kube.Get(ctx, types.NamespacedName{Namespace: "default", Name: "pre"}, stored); err != nil {
				t.Fatal(err)
			}
			if rb := stored.Status.Rollback; rb != nil {
				got.storedToken = rb.Token
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(rollbackResult{}), cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("\n%s\nUpdate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
