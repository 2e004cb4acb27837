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

package ha

import (
	"context"
	"errors"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// fakeClient answers from one stored resource and records the writes.
type fakeClient struct {
	have    *pve.HAResource
	readErr error
	calls   []string
}

func (f *fakeClient) HAResourceOf(context.Context, pve.GuestRef) (pve.HAResource, bool, error) {
	f.calls = append(f.calls, "read")
	if f.have == nil {
		return pve.HAResource{}, false, f.readErr
	}
	return *f.have, true, f.readErr
}

func (f *fakeClient) CreateHAResource(_ context.Context, _ pve.GuestRef, r pve.HAResource) error {
	f.calls = append(f.calls, "create "+r.State)
	return nil
}

func (f *fakeClient) UpdateHAResource(_ context.Context, _ pve.GuestRef, r pve.HAResource) error {
	f.calls = append(f.calls, "update "+r.State)
	return nil
}

func (f *fakeClient) DeleteHAResource(context.Context, pve.GuestRef) error {
	f.calls = append(f.calls, "delete")
	return nil
}

var (
	ref     = pve.GuestRef{Type: pve.QEMU, Node: "pve", VMID: 100}
	errRead = errors.New("read failed")
)

func i32(v int32) *int32 { return &v }

func TestWant(t *testing.T) {
	no := false
	cases := map[string]struct {
		reason string
		spec   v1alpha1.GuestHA
		want   pve.HAResource
	}{
		"Empty": {reason: "An empty ha is PVE's defaults, written out.", want: pve.HADefaults()},
		"AllSet": {reason: "Each field maps to its PVE option.", spec: v1alpha1.GuestHA{State: v1alpha1.HAStateStopped, MaxRestart: i32(3), MaxRelocate: i32(0), Failback: &no},
			want: pve.HAResource{State: "stopped", MaxRestart: 3, MaxRelocate: 0, Failback: false}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Want(&tc.spec)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestObserveAndApply(t *testing.T) {
	defaults := pve.HADefaults()
	stopped := defaults
	stopped.State = "stopped"
	cases := map[string]struct {
		reason     string
		spec       *v1alpha1.GuestHA
		status     *v1alpha1.GuestHAStatus
		have       *pve.HAResource
		readErr    error
		converged  bool
		wantStatus *v1alpha1.GuestHAStatus
		wantCalls  []string
		wantErr    error
		wantEvent  event.Event
	}{
		"NeverAsked": {reason: "A guest that never had spec.ha costs no request.", converged: true},
		"Missing": {reason: "An HA resource asked for and missing is created.", spec: &v1alpha1.GuestHA{},
			wantStatus: &v1alpha1.GuestHAStatus{SID: "vm:100"}, wantCalls: []string{"read", "create started"},
			wantEvent: event.Normal(ReasonHACreated, "made the guest HA resource vm:100 (state=started max_restart=1 max_relocate=1 failback=true)")},
		"Drifted": {reason: "An HA resource changed in PVE is set back.", spec: &v1alpha1.GuestHA{}, have: &stopped,
			wantStatus: &v1alpha1.GuestHAStatus{SID: "vm:100", State: "stopped"}, wantCalls: []string{"read", "update started"},
			wantEvent: event.Normal(ReasonHACorrected, "set HA resource vm:100 back to state=started max_restart=1 max_relocate=1 failback=true "+
				"(Proxmox VE had state=stopped max_restart=1 max_relocate=1 failback=true)")},
		"AsAsked": {reason: "An HA resource as asked needs nothing.", spec: &v1alpha1.GuestHA{}, have: &defaults, converged: true,
			wantStatus: &v1alpha1.GuestHAStatus{SID: "vm:100", State: "started"}, wantCalls: []string{"read"}},
		"Dropped": {reason: "spec.ha dropped removes the resource status recorded.", status: &v1alpha1.GuestHAStatus{SID: "vm:100"}, have: &defaults,
			wantStatus: &v1alpha1.GuestHAStatus{SID: "vm:100", State: "started"}, wantCalls: []string{"read", "delete"},
			wantEvent: event.Normal(ReasonHARemoved, "removed HA resource vm:100: spec.ha is not set")},
		"DroppedGone": {reason: "spec.ha dropped and no resource left clears the status.", status: &v1alpha1.GuestHAStatus{SID: "vm:100"},
			converged: true, wantCalls: []string{"read"}},
		"ReadFails": {reason: "A failed read is returned, status kept.", spec: &v1alpha1.GuestHA{}, status: &v1alpha1.GuestHAStatus{SID: "vm:100"},
			readErr: errRead, wantStatus: &v1alpha1.GuestHAStatus{SID: "vm:100"}, wantCalls: []string{"read"}, wantErr: errRead},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeClient{have: tc.have, readErr: tc.readErr}
			status := tc.status
			o, err := Observe(t.Context(), f, ref, tc.spec, &status)
			if diff := cmp.Diff(tc.wantErr, err, cmpopts.EquateErrors()); diff != "" {
				t.Fatalf("%s\nerror -want, +got:\n%s", tc.reason, diff)
			}
			if err == nil {
				if got := o.Converged(); got != tc.converged {
					t.Errorf("%s\nconverged %v, want %v", tc.reason, got, tc.converged)
				}
				ev, err := o.Apply(t.Context(), f, ref)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.wantEvent, ev); diff != "" {
					t.Errorf("%s\nevent -want, +got:\n%s", tc.reason, diff)
				}
			}
			if diff := cmp.Diff(tc.wantStatus, status); diff != "" {
				t.Errorf("%s\nstatus -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantCalls, f.calls); diff != "" {
				t.Errorf("%s\ncalls -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRelease(t *testing.T) {
	defaults := pve.HADefaults()
	cases := map[string]struct {
		reason    string
		spec      *v1alpha1.GuestHA
		have      *pve.HAResource
		released  bool
		wantCalls []string
	}{
		"NeverAsked": {reason: "A guest without spec.ha or status goes straight to deletion."},
		"Managed": {reason: "An HA resource is removed as this reconcile's step.", spec: &v1alpha1.GuestHA{}, have: &defaults,
			released: true, wantCalls: []string{"read", "delete"}},
		"AlreadyGone": {reason: "A resource already removed lets deletion go on.", spec: &v1alpha1.GuestHA{}, wantCalls: []string{"read"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeClient{have: tc.have}
			status := &v1alpha1.GuestHAStatus{SID: "vm:100"}
			if tc.spec == nil {
				status = nil
			}
			released, err := Release(t.Context(), f, ref, tc.spec, &status)
			if err != nil {
				t.Fatal(err)
			}
			if released != tc.released || status != nil {
				t.Errorf("%s\nreleased %v (status %v), want %v and no status", tc.reason, released, status, tc.released)
			}
			if diff := cmp.Diff(tc.wantCalls, f.calls); diff != "" {
				t.Errorf("%s\ncalls -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPowerWant(t *testing.T) {
	cases := map[string]struct {
		reason                   string
		spec                     *v1alpha1.GuestHA
		running, stopped         bool
		wantRunning, wantStopped bool
	}{
		"NoHA":     {reason: "Without ha the spec's power stands.", running: false, stopped: true, wantStopped: true},
		"Ignored":  {reason: "ignored leaves power to the provider.", spec: &v1alpha1.GuestHA{State: v1alpha1.HAStateIgnored}, stopped: true, wantStopped: true},
		"Started":  {reason: "started: the provider may start the guest, as HA would.", spec: &v1alpha1.GuestHA{}, wantRunning: true},
		"Stopped":  {reason: "stopped: HA stops it; the provider neither starts nor stops it.", spec: &v1alpha1.GuestHA{State: v1alpha1.HAStateStopped}, running: true},
		"Disabled": {reason: "disabled: a direct stop would turn it into stopped, so none.", spec: &v1alpha1.GuestHA{State: v1alpha1.HAStateDisabled}, stopped: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, s := PowerWant(tc.spec, tc.running, tc.stopped)
			if r != tc.wantRunning || s != tc.wantStopped {
				t.Errorf("%s\ngot running %v stopped %v, want %v %v", tc.reason, r, s, tc.wantRunning, tc.wantStopped)
			}
		})
	}
}
