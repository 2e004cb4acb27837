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

package guest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// TestConnectNamesAMissingConnection checks what a resource whose
// connection has no client says: a connection that does not exist is named
// as missing, with why the resource uses it; one that exists but is not
// ready yet keeps saying so.
func TestConnectNamesAMissingConnection(t *testing.T) {
	cases := map[string]struct {
		reason       string
		spec         v1alpha1.ResourceSpec
		existing     string
		want         string
		wantNotFound bool
	}{
		"NoConnectionRef": {
			reason:       "Without connectionRef the resource uses default, which does not exist.",
			want:         `ProxmoxConnection "default" does not exist (spec.connectionRef is unset, so the connection named "default" is used)`,
			wantNotFound: true,
		},
		"ConnectionRef": {
			reason:       "connectionRef names a connection that does not exist.",
			spec:         v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: "lab"}},
			want:         `ProxmoxConnection "lab" does not exist (named by spec.connectionRef)`,
			wantNotFound: true,
		},
		"ExistsNotReady": {
			reason:   "The connection exists and has no client yet: not ready, not missing.",
			spec:     v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: "lab"}},
			existing: "lab",
			want:     `connection "lab": proxmox connection is not ready`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := guesttest.FakeKube(t)
			if tc.existing != "" {
				pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: tc.existing}}
				if err := kube.Create(context.Background(), pc); err != nil {
					t.Fatal(err)
				}
			}
			cr := &v1alpha1.StorageDownloadURL{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "img"}}
			cr.Spec.ResourceSpec = tc.spec
			_, _, err := guest.Connect(context.Background(), guest.Readers{Kube: kube, Fresh: kube}, guesttest.NoUsage{}, pve.NewCache(), cr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s\nConnect: got %v, want an error containing %s", tc.reason, err, tc.want)
			}
			if got := errors.Is(err, guest.ErrConnectionNotFound); got != tc.wantNotFound {
				t.Errorf("%s\nerrors.Is(err, ErrConnectionNotFound) = %v, want %v", tc.reason, got, tc.wantNotFound)
			}
		})
	}
}
