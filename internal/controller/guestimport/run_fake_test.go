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
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// fakeProxmox is a cluster of rows whose configurations are configs (by
// VMID); listErr and configErr are its refusals.
type fakeProxmox struct {
	rows      []pve.Resource
	configs   map[int]map[string]string
	listErr   error
	configErr error
}

func (f fakeProxmox) ClusterResources(context.Context) ([]pve.Resource, error) {
	return f.rows, f.listErr
}

func (f fakeProxmox) GuestPending(_ context.Context, ref pve.GuestRef) (pve.GuestConfig, error) {
	cfg := pve.GuestConfig{}
	for k, v := range f.configs[ref.VMID] {
		cfg[k] = pve.PendingEntry{Value: v, HasValue: true}
	}
	return cfg, f.configErr
}

// runResult is what one run left in the import's status.
type runResult struct {
	guests                               []v1alpha1.ImportedGuest
	imported, existing, skipped, failing int32
	err                                  error
}

// TestRunWithFake covers what an import decides for each selected guest, in
// milliseconds; what PVE answers is covered against the simulator.
func TestRunWithFake(t *testing.T) {
	errBoom := errors.New("boom")
	web := pve.Resource{Type: "qemu", VMID: 100, Node: "pve", Name: "web", Status: "running"}
	ct := pve.Resource{Type: "lxc", VMID: 101, Node: "pve", Name: "cache", Status: "stopped"}
	cases := map[string]struct {
		reason string
		cl     fakeProxmox
		held   *v1alpha1.VirtualMachine // a resource already naming a guest
		want   runResult
	}{
		"ImportedEachKind": {
			reason: "A QEMU guest gets a VirtualMachine and an LXC guest a Container, named after the guest.",
			cl: fakeProxmox{rows: []pve.Resource{ct, web},
				configs: map[int]map[string]string{100: {"name": "web", "cores": "2"}, 101: {"hostname": "cache", "rootfs": "local-lvm:4"}}},
			want: runResult{imported: 2, guests: []v1alpha1.ImportedGuest{
				{VMID: 100, Name: "web", Node: "pve", Type: "qemu", Result: v1alpha1.ImportResultImported, Resource: "VirtualMachine/web"},
				{VMID: 101, Name: "cache", Node: "pve", Type: "lxc", Result: v1alpha1.ImportResultImported, Resource: "Container/cache"},
			}},
		},
		"ManagedElsewhere": {
			reason: "A guest whose description carries a resource's marker is skipped: that resource manages it.",
			cl:     fakeProxmox{rows: []pve.Resource{web}, configs: map[int]map[string]string{100: {"description": "crossplane: other/web uid=1234"}}},
			want: runResult{skipped: 1, guests: []v1alpha1.ImportedGuest{{VMID: 100, Name: "web", Node: "pve", Type: "qemu",
				Result: v1alpha1.ImportResultSkipped, Reason: "managed by the resource its description names (crossplane: other/web uid=1234)"}}},
		},
		"AlreadyNamed": {
			reason: "A guest another resource names by its VMID is skipped, and its configuration is not read.",
			cl:     fakeProxmox{rows: []pve.Resource{web}, configErr: errBoom},
			held:   &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "mine"}},
			want: runResult{skipped: 1, guests: []v1alpha1.ImportedGuest{{VMID: 100, Name: "web", Node: "pve", Type: "qemu",
				Result: v1alpha1.ImportResultSkipped, Reason: "already named by VirtualMachine team/mine"}}},
		},
		"ConfigRefused": {
			reason: "A guest whose configuration cannot be read fails alone, with PVE's reason.",
			cl:     fakeProxmox{rows: []pve.Resource{web}, configErr: errBoom},
			want: runResult{failing: 1, guests: []v1alpha1.ImportedGuest{{VMID: 100, Name: "web", Node: "pve", Type: "qemu",
				Result: v1alpha1.ImportResultFailed, Reason: "boom"}}},
		},
		"ListRefused": {
			reason: "A cluster that cannot be listed fails the run, its cause kept for errors.Is.",
			cl:     fakeProxmox{listErr: errBoom},
			want:   runResult{err: errBoom},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			kube := importKube(t)
			gi := &v1alpha1.GuestImport{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "imp", Generation: 1},
				Spec: v1alpha1.GuestImportSpec{Selector: v1alpha1.GuestSelector{Types: []v1alpha1.ImportGuestType{v1alpha1.ImportGuestQEMU, v1alpha1.ImportGuestLXC}}}}
			if err := kube.Create(ctx, gi); err != nil {
				t.Fatal(err)
			}
			if tc.held != nil {
				tc.held.Spec.ConnectionRef = &v1alpha1.ConnectionReference{Name: v1alpha1.DefaultConnectionName}
				meta.SetExternalName(tc.held, "100")
				if err := kube.Create(ctx, tc.held); err != nil {
					t.Fatal(err)
				}
			}
			r := &Reconciler{kube: kube, fresh: kube, record: &guesttest.EventLog{}, now: time.Now}
			_, err := r.run(ctx, gi, tc.cl, time.Now())
			st := gi.Status
			got := runResult{guests: st.Guests, imported: st.Imported, existing: st.Existing, skipped: st.Skipped, failing: st.Failed, err: err}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(runResult{}), cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("\n%s\nrun(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
