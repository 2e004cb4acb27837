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

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// fakeProxmox answers the snapshot requests with upid and err and records
// them; any other call panics through the nil embedded interface, failing
// the test where the controller asked Proxmox something unexpected.
type fakeProxmox struct {
	proxmox
	upid  string
	err   error
	calls []string
}

func (f *fakeProxmox) CreateSnapshot(_ context.Context, _ pve.GuestRef, name string, o pve.SnapshotOptions) (string, error) {
	f.calls = append(f.calls, "create "+name+" ("+o.Description+")")
	return f.upid, f.err
}

func (f *fakeProxmox) SetSnapshotDescription(_ context.Context, _ pve.GuestRef, name, description string) error {
	f.calls = append(f.calls, "describe "+name+" ("+description+")")
	return f.err
}

func (f *fakeProxmox) DeleteSnapshot(_ context.Context, _ pve.GuestRef, name string) (string, error) {
	f.calls = append(f.calls, "delete "+name)
	return f.upid, f.err
}

// fakeVerb is what one verb against the fake left behind.
type fakeVerb struct {
	calls  []string
	task   string // the create task annotation, else the last task's UPID
	events []string
	err    error
}

// runFake runs verb on a snapshot "pre" of VM 700 whose Observe saw obs,
// against a fake answering upid and answer.
func runFake(obs observation, upid string, answer error, verb func(*external, *v1alpha1.VirtualMachineSnapshot) error) fakeVerb {
	cl := &fakeProxmox{upid: upid, err: answer}
	log := &guesttest.EventLog{}
	e := &external{cl: cl, record: log, obs: obs, target: target{ref: pve.GuestRef{Type: pve.QEMU, Node: "pve", VMID: 700}, what: "VirtualMachine web"}}
	cr := &v1alpha1.VirtualMachineSnapshot{Spec: v1alpha1.VirtualMachineSnapshotSpec{Description: "before upgrade"}}
	meta.SetExternalName(cr, "pre")
	err := verb(e, cr)
	got := fakeVerb{calls: cl.calls, err: err, task: cr.GetAnnotations()[guest.AnnotationCreateTask], events: log.Reasons()}
	if lt := cr.Status.LastTask; lt != nil {
		got.task = lt.UPID
	}
	return got
}

// fakeCase is one row of a verb table against the fake: what Observe saw,
// PVE's answer, and what the verb must leave behind.
type fakeCase struct {
	reason string
	obs    observation
	err    error
	want   fakeVerb
}

// runFakeTable runs verb (named for the failure message) for every case,
// against a fake answering upid and the case's error.
func runFakeTable(t *testing.T, name, upid string, cases map[string]fakeCase, verb func(*external, *v1alpha1.VirtualMachineSnapshot) error) {
	t.Helper()
	for caseName, tc := range cases {
		t.Run(caseName, func(t *testing.T) {
			got := runFake(tc.obs, upid, tc.err, verb)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(fakeVerb{}), cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("\n%s\n%s(...): -want, +got:\n%s", tc.reason, name, diff)
			}
		})
	}
}

// TestCreateWithFake covers what Create decides on PVE's answer, in
// milliseconds; the snapshot PVE makes is covered by TestCreate.
func TestCreateWithFake(t *testing.T) {
	errBoom := errors.New("boom")
	cases := map[string]fakeCase{
		"Started": {
			reason: "The snapshot task's UPID is recorded for Observe to follow, with an event.",
			want:   fakeVerb{calls: []string{"create pre (before upgrade)"}, task: "UPID:1", events: []string{string(reasonSnapshotting)}},
		},
		"GuestLocked": {
			reason: "A guest busy with a backup or another snapshot is tried again next poll, without an error.",
			err:    errors.New("VM 700 is locked (backup)"),
			want:   fakeVerb{calls: []string{"create pre (before upgrade)"}},
		},
		"Refused": {
			reason: "Any other refusal is returned as it is, and no task is recorded.",
			err:    errBoom,
			want:   fakeVerb{calls: []string{"create pre (before upgrade)"}, err: errBoom},
		},
	}
	runFakeTable(t, "Create", "UPID:1", cases, func(e *external, cr *v1alpha1.VirtualMachineSnapshot) error {
		_, err := e.Create(context.Background(), cr)
		return err
	})
}

// TestUpdateWithFake covers when Update asks PVE to change the description.
func TestUpdateWithFake(t *testing.T) {
	errBoom := errors.New("boom")
	old := &pve.Snapshot{Name: "pre", Description: "old words"}
	cases := map[string]fakeCase{
		"NotObserved": {
			reason: "Without a snapshot seen by Observe nothing is asked.",
		},
		"Busy": {
			reason: "While PVE works on the snapshot nothing is asked.",
			obs:    observation{snap: old, busy: true},
		},
		"DescriptionChanged": {
			reason: "A new description is written, with an event.",
			obs:    observation{snap: old},
			want:   fakeVerb{calls: []string{"describe pre (before upgrade)"}, events: []string{string(reasonDescribed)}},
		},
		"GuestLocked": {
			reason: "A locked guest is tried again next poll, without an error or event.",
			obs:    observation{snap: old},
			err:    errors.New("VM 700 is locked (snapshot)"),
			want:   fakeVerb{calls: []string{"describe pre (before upgrade)"}},
		},
		"Refused": {
			reason: "Any other refusal is returned wrapped, its cause kept for errors.Is.",
			obs:    observation{snap: old},
			err:    errBoom,
			want:   fakeVerb{calls: []string{"describe pre (before upgrade)"}, err: errBoom},
		},
	}
	runFakeTable(t, "Update", "", cases, func(e *external, cr *v1alpha1.VirtualMachineSnapshot) error {
		_, err := e.Update(context.Background(), cr)
		return err
	})
}

// TestDeleteWithFake covers when Delete asks PVE to delete the snapshot.
func TestDeleteWithFake(t *testing.T) {
	errBoom := errors.New("boom")
	snap := &pve.Snapshot{Name: "pre", Description: "before upgrade"}
	cases := map[string]fakeCase{
		"AlreadyGone": {
			reason: "A snapshot Observe did not find is not deleted again.",
		},
		"Busy": {
			reason: "While PVE works on the snapshot it is left alone.",
			obs:    observation{snap: snap, busy: true},
		},
		"Deleted": {
			reason: "The deletion task is recorded as the last task, with an event; the guest is never deleted.",
			obs:    observation{snap: snap},
			want:   fakeVerb{calls: []string{"delete pre"}, task: "UPID:2", events: []string{string(reasonSnapshotGone)}},
		},
		"Refused": {
			reason: "A refusal is returned wrapped, its cause kept for errors.Is.",
			obs:    observation{snap: snap},
			err:    errBoom,
			want:   fakeVerb{calls: []string{"delete pre"}, err: errBoom},
		},
	}
	runFakeTable(t, "Delete", "UPID:2", cases, func(e *external, cr *v1alpha1.VirtualMachineSnapshot) error {
		_, err := e.Delete(context.Background(), cr)
		return err
	})
}
