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
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// TestAllows checks the allow decision of spec.allowedNamespaces alone.
func TestAllows(t *testing.T) {
	team := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
	cases := map[string]struct {
		reason  string
		allowed *v1alpha1.AllowedNamespaces
		ns      string
		labels  labels.Set
		want    bool
	}{
		"Unset": {
			reason: "Without allowedNamespaces every namespace may use the connection, as before.",
			ns:     "anything", want: true,
		},
		"NameListed": {
			reason:  "A namespace names lists is allowed.",
			allowed: &v1alpha1.AllowedNamespaces{Names: []string{"team-a", "team-b"}},
			ns:      "team-b", want: true,
		},
		"NameNotListed": {
			reason:  "A namespace names does not list, with no selector, is refused.",
			allowed: &v1alpha1.AllowedNamespaces{Names: []string{"team-a"}},
			ns:      "team-b",
		},
		"SelectorMatches": {
			reason:  "A namespace whose labels the selector matches is allowed.",
			allowed: &v1alpha1.AllowedNamespaces{Selector: team},
			ns:      "x", labels: labels.Set{"team": "a"}, want: true,
		},
		"SelectorDoesNotMatch": {
			reason:  "A namespace whose labels the selector does not match is refused.",
			allowed: &v1alpha1.AllowedNamespaces{Selector: team},
			ns:      "x", labels: labels.Set{"team": "b"},
		},
		"BothNameMatches": {
			reason:  "With both, a listed name is enough even if the labels do not match.",
			allowed: &v1alpha1.AllowedNamespaces{Names: []string{"x"}, Selector: team},
			ns:      "x", want: true,
		},
		"BothSelectorMatches": {
			reason:  "With both, matching labels are enough even if the name is not listed.",
			allowed: &v1alpha1.AllowedNamespaces{Names: []string{"y"}, Selector: team},
			ns:      "x", labels: labels.Set{"team": "a"}, want: true,
		},
		"BothNeither": {
			reason:  "With both, a namespace neither listed nor matching is refused.",
			allowed: &v1alpha1.AllowedNamespaces{Names: []string{"y"}, Selector: team},
			ns:      "x",
		},
		"EmptySelector": {
			reason:  "An empty selector matches every namespace, as a label selector does.",
			allowed: &v1alpha1.AllowedNamespaces{Selector: &metav1.LabelSelector{}},
			ns:      "x", want: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := guest.Allows(tc.allowed, tc.ns, tc.labels)
			if err != nil {
				t.Fatalf("%s\nAllows: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nAllows: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestConnectRefusesANamespaceNotAllowed checks that Connect and ClientOf
// refuse a resource whose namespace the connection does not allow before
// anything else (no client is handed out, no usage recorded), and hand the
// cached client to an allowed one.
func TestConnectRefusesANamespaceNotAllowed(t *testing.T) {
	cases := map[string]struct {
		reason  string
		allowed *v1alpha1.AllowedNamespaces
		ns      string
		wantErr error
	}{
		"Unset": {
			reason: "A connection without allowedNamespaces serves every namespace.",
			ns:     "team-b",
		},
		"AllowedByName": {
			reason:  "A listed namespace gets the client.",
			allowed: &v1alpha1.AllowedNamespaces{Names: []string{"team-a"}},
			ns:      "team-a",
		},
		"AllowedByLabel": {
			reason:  "A namespace labelled to match the selector gets the client (its labels read from the API server).",
			allowed: &v1alpha1.AllowedNamespaces{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}},
			ns:      "team-b",
		},
		"Refused": {
			reason:  "Any other namespace is refused with ErrNamespaceNotAllowed.",
			allowed: &v1alpha1.AllowedNamespaces{Names: []string{"team-a"}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}},
			ns:      "team-b",
			wantErr: guest.ErrNamespaceNotAllowed,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			kube := guesttest.FakeKube(t)
			pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DefaultConnectionName}}
			pc.Spec.AllowedNamespaces = tc.allowed
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Labels: map[string]string{"team": "b"}}}
			if err := kube.Create(ctx, pc); err != nil {
				t.Fatal(err)
			}
			if err := kube.Create(ctx, ns); err != nil {
				t.Fatal(err)
			}
			clients := guesttest.DefaultConnection(&pve.Client{})
			cr := &v1alpha1.StorageDownloadURL{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: "img"}}
			usage := &countUsage{}
			cl, _, err := guest.Connect(ctx, guest.Readers{Kube: kube, Fresh: kube}, usage, clients, cr)
			if diff := cmp.Diff(tc.wantErr, err, cmpopts.EquateErrors()); diff != "" {
				t.Fatalf("%s\nConnect: -want error, +got error:\n%s", tc.reason, diff)
			}
			if tc.wantErr != nil && (cl != nil || usage.n != 0) {
				t.Errorf("%s\nConnect refused but handed out a client (%v) or recorded %d usages", tc.reason, cl != nil, usage.n)
			}
			_, err = guest.ClientOf(ctx, guest.Readers{Kube: kube, Fresh: kube}, clients, cr, v1alpha1.DefaultConnectionName)
			if diff := cmp.Diff(tc.wantErr, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s\nClientOf: -want error, +got error:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRefusalSaysHowToAllow checks the refusal's message: it names the
// namespace and the connection and says how to allow it.
func TestRefusalSaysHowToAllow(t *testing.T) {
	ctx := context.Background()
	kube := guesttest.FakeKube(t)
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: "lab"}}
	pc.Spec.AllowedNamespaces = &v1alpha1.AllowedNamespaces{Names: []string{"team-a"}}
	if err := kube.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	cr := &v1alpha1.GuestImport{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "all"}}
	_, err := guest.ClientOf(ctx, guest.Readers{Kube: kube, Fresh: kube}, pve.NewCache(), cr, "lab")
	want := `namespace "team-b" may not use ProxmoxConnection "lab": add it to the connection's spec.allowedNamespaces.names, label it to match spec.allowedNamespaces.selector, or use a connection that allows it: its spec.allowedNamespaces neither lists nor selects the namespace`
	if err == nil {
		t.Fatal("ClientOf: got no error, want a refusal")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("The refusal names the namespace, the connection and the fix: -want, +got:\n%s", diff)
	}
}

// countUsage counts the usages Connect records.
type countUsage struct{ n int }

func (u *countUsage) Track(context.Context, resource.ModernManaged) error {
	u.n++
	return nil
}
