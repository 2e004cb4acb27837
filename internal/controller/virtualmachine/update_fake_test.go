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

package virtualmachine

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// fakeProxmox answers the calls a test expects and records them; any other
// call panics through the nil embedded interface, failing the test where
// the controller asked Proxmox something unexpected.
type fakeProxmox struct {
	proxmox
	*guesttest.ConfigWrites
}

func (f fakeProxmox) SetGuestConfig(ctx context.Context, ref pve.GuestRef, set map[string]string, del []string) error {
	return f.ConfigWrites.SetGuestConfig(ctx, ref, set, del)
}

// TestUpdateWithFake covers what Update decides on its own, from the
// observation and the client's answers, in milliseconds; what Proxmox does
// with the requests is covered by TestUpdate against the simulator.
func TestUpdateWithFake(t *testing.T) {
	errBoom := errors.New("boom")
	ref := pve.GuestRef{Type: pve.QEMU, Node: "pve", VMID: 100}
	pw := &guest.CloudInitPassword{Value: "s3cr3t", Version: v1alpha1.CloudInitPasswordApplied{Generation: 2}}
	type want struct {
		sets    []guesttest.ConfigWrite
		err     error
		errText string
		applied *v1alpha1.CloudInitPasswordApplied
	}
	cases := map[string]struct {
		reason  string
		observe func(o *observation) // nil: Update runs without Observe
		setErr  error
		want    want
	}{
		"NotObserved": {
			reason: "Update without an Observe before it says so and asks Proxmox nothing.",
			want:   want{err: guest.ErrNotObserved, errText: guest.ErrNotObserved.Error()},
		},
		"ConfigAndPasswordWritten": {
			reason: "Drifted keys and a new cloud-init password go in one PUT config; the password's version is recorded.",
			observe: func(o *observation) {
				o.Ref, o.needPass, o.want.Password = ref, true, pw
				o.plan = pve.VMPlan{Set: map[string]string{"cores": "2"}, Fields: []string{"cores"}}
			},
			want: want{sets: []guesttest.ConfigWrite{{Ref: ref, Set: map[string]string{"cores": "2", "cipassword": "s3cr3t"}}},
				applied: &v1alpha1.CloudInitPasswordApplied{Generation: 2}},
		},
		"ConfigFails": {
			reason: "A refused PUT config is returned wrapped, its cause kept for errors.Is.",
			observe: func(o *observation) {
				o.Ref = ref
				o.plan = pve.VMPlan{Set: map[string]string{"cores": "2"}, Fields: []string{"cores"}}
			},
			setErr: errBoom,
			want: want{sets: []guesttest.ConfigWrite{{Ref: ref, Set: map[string]string{"cores": "2"}}}, err: errBoom,
				errText: "cannot apply configuration: boom"},
		},
		"PasswordNeverInTheError": {
			reason: "Should PVE echo the password in its refusal, the error (a condition, an event) shows it masked.",
			observe: func(o *observation) {
				o.Ref, o.needPass, o.want.Password = ref, true, pw
			},
			setErr: errors.New("400 cipassword: value 's3cr3t' refused"),
			want: want{sets: []guesttest.ConfigWrite{{Ref: ref, Set: map[string]string{"cipassword": "s3cr3t"}}},
				errText: "cannot apply configuration: 400 cipassword: value '*****' refused"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := &guesttest.ConfigWrites{Err: tc.setErr}
			cl := fakeProxmox{ConfigWrites: w}
			e := &external{connector: &connector{Deps: guest.Deps{Record: event.NewNopRecorder()}, agentAsked: guest.NewStamps()}, cl: cl}
			if tc.observe != nil {
				tc.observe(e.obs.Begin())
			}
			cr := &v1alpha1.VirtualMachine{}
			_, err := e.Update(context.Background(), cr)
			got := want{sets: w.Writes, err: err, applied: cr.Status.CloudInitPasswordApplied}
			if err != nil {
				got.errText = err.Error()
			}
			if tc.want.err == nil {
				got.err = nil // compared by text: a scrubbed error is a new one
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("\n%s\nUpdate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
