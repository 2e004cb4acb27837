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

package connection

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

func TestFingerprintHoldsNoCredential(t *testing.T) {
	eps := []string{"pve1", "pve2"}
	a := fingerprint(3, eps, []v1alpha1.ObservedSecret{{Namespace: "ns", Name: "s", ResourceVersion: "10"}})
	b := fingerprint(3, eps, []v1alpha1.ObservedSecret{{Namespace: "ns", Name: "s", ResourceVersion: "11"}})
	c := fingerprint(4, eps, []v1alpha1.ObservedSecret{{Namespace: "ns", Name: "s", ResourceVersion: "10"}})
	d := fingerprint(3, eps[:1], []v1alpha1.ObservedSecret{{Namespace: "ns", Name: "s", ResourceVersion: "10"}})
	if a == b || a == c || a == d {
		t.Errorf("fingerprints must differ on a Secret rotation, a spec change or other endpoints: %q %q %q %q", a, b, c, d)
	}
	if want := "generation=3;endpoints=pve1,pve2;ns/s@10"; a != want {
		t.Errorf("fingerprint = %q, want %q", a, want)
	}
}

func TestRedact(t *testing.T) {
	c := credentials{password: "hunter2", secret: "tok-123"}
	got := c.redact(`login "root@pam" with hunter2 failed; token tok-123`)
	if strings.Contains(got, "hunter2") || strings.Contains(got, "tok-123") {
		t.Errorf("redact left a credential: %q", got)
	}
	if got := (credentials{}).redact("nothing to hide"); got != "nothing to hide" {
		t.Errorf("redact with no credentials changed the message: %q", got)
	}
}

func TestSecretRefKeys(t *testing.T) {
	pc := &v1alpha1.ProxmoxConnection{Spec: v1alpha1.ProxmoxConnectionSpec{
		PasswordFrom: &v1alpha1.SecretKeySelector{Namespace: "a", Name: "pw", Key: "k"},
		CAFrom:       &v1alpha1.SecretKeySelector{Namespace: "b", Name: "ca", Key: "k"},
	}}
	if diff := cmp.Diff([]string{"a/pw", "b/ca"}, secretRefKeys(pc)); diff != "" {
		t.Errorf("secretRefKeys: -want +got:\n%s", diff)
	}
	if got := secretRefKeys(&corev1.Secret{}); got != nil {
		t.Errorf("secretRefKeys of a non-connection = %v, want nil", got)
	}
}

func TestConnectionOfUsage(t *testing.T) {
	usage := func(kind, name string) *v1alpha1.ProviderConfigUsage {
		u := &v1alpha1.ProviderConfigUsage{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "u"}}
		u.ProviderConfigReference = xpv2.ProviderConfigReference{Kind: kind, Name: name}
		return u
	}
	cases := map[string]struct {
		u    *v1alpha1.ProviderConfigUsage
		want []reconcile.Request
	}{
		"ProxmoxConnection": {usage("ProxmoxConnection", "pve"), []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "pve"}}}},
		"OtherKind":         {usage("ClusterProviderConfig", "pve"), nil},
		"NoName":            {usage("ProxmoxConnection", ""), nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, connectionOfUsage(context.Background(), tc.u)); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

func TestResolveCredentials(t *testing.T) {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "creds", Name: "pve", ResourceVersion: "42"},
		Data:       map[string][]byte{"password": []byte("pw"), "ca": []byte("PEM")},
	}
	kube := fake.NewClientBuilder().WithScheme(s).WithObjects(secret).Build()
	r := NewReconciler(nil, kube, nil)

	cases := map[string]struct {
		spec       v1alpha1.ProxmoxConnectionSpec
		wantReason xpv2.ConditionReason
		wantCreds  credentials
		wantSeen   int
	}{
		"InlineOnly": {
			spec:      v1alpha1.ProxmoxConnectionSpec{Username: "u@pam", Password: "inline", CABundle: "INLINE-PEM"},
			wantCreds: credentials{password: "inline", ca: []byte("INLINE-PEM")},
		},
		"OneSecretTwoKeysReadOnce": {
			spec: v1alpha1.ProxmoxConnectionSpec{
				PasswordFrom: &v1alpha1.SecretKeySelector{Namespace: "creds", Name: "pve", Key: "password"},
				CAFrom:       &v1alpha1.SecretKeySelector{Namespace: "creds", Name: "pve", Key: "ca"},
			},
			wantCreds: credentials{password: "pw", ca: []byte("PEM")},
			wantSeen:  1,
		},
		"SecretNotFound": {
			spec:       v1alpha1.ProxmoxConnectionSpec{SecretFrom: &v1alpha1.SecretKeySelector{Namespace: "creds", Name: "nope", Key: "t"}},
			wantReason: v1alpha1.ReasonSecretNotFound,
		},
		"KeyNotFoundStillObservesTheSecret": {
			spec:       v1alpha1.ProxmoxConnectionSpec{SecretFrom: &v1alpha1.SecretKeySelector{Namespace: "creds", Name: "pve", Key: "token"}},
			wantReason: v1alpha1.ReasonSecretKeyNotFound,
			wantSeen:   1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			creds, seen, err := r.resolveCredentials(context.Background(), tc.spec)
			if tc.wantReason != "" {
				if err == nil || reasonOf(err) != tc.wantReason {
					t.Fatalf("error %v (reason %q), want reason %q", err, reasonOf(err), tc.wantReason)
				}
				if strings.Contains(err.Error(), "pw") {
					t.Errorf("error message contains a credential: %q", err)
				}
			} else if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if len(seen) != tc.wantSeen {
				t.Errorf("observed %v, want %d Secrets", seen, tc.wantSeen)
			}
			if tc.wantSeen == 1 && seen[0].ResourceVersion != "42" {
				t.Errorf("observed resourceVersion %q, want 42", seen[0].ResourceVersion)
			}
			if tc.wantReason == "" {
				if diff := cmp.Diff(tc.wantCreds, creds, cmp.AllowUnexported(credentials{})); diff != "" {
					t.Errorf("credentials -want +got:\n%s", diff)
				}
			}
		})
	}
}

func TestEndpointStatusAndDegraded(t *testing.T) {
	since := time.Date(2026, 12, 3, 12, 0, 0, 500, time.UTC)
	creds := credentials{secret: "tok-123"}
	pc := &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	pc.Status.Endpoints = endpointStatus(nil, []pve.EndpointState{
		{URL: "https://a:8006/api2/json", Message: "dial tcp a: connect: connection refused (tok-123)", Since: since},
		{URL: "https://b:8006/api2/json", Healthy: true, Active: true},
	}, creds.redact)
	if got := pc.Status.Endpoints[0]; got.Health != v1alpha1.EndpointDown || strings.Contains(got.Message, "tok-123") ||
		got.LastTransitionTime == nil || !got.LastTransitionTime.Equal(&metav1.Time{Time: since.Truncate(time.Second)}) {
		t.Errorf("down endpoint status = %+v", got)
	}
	if got := pc.Status.Endpoints[1]; got.Health != v1alpha1.EndpointHealthy || !got.Active || got.Message != "" {
		t.Errorf("healthy endpoint status = %+v", got)
	}
	c := readyCondition(pc)
	if c.Status != corev1.ConditionTrue || c.Reason != v1alpha1.ReasonDegraded || !strings.Contains(c.Message, "https://a:8006/api2/json") ||
		!strings.Contains(c.Message, "1 of 2 endpoints down") {
		t.Errorf("condition with one endpoint down = %+v, want Ready True, Degraded, naming it", c)
	}
	pc.Status.Endpoints = endpointStatus(pc.Status.Endpoints, []pve.EndpointState{
		{URL: "https://a:8006/api2/json", Healthy: true, Since: since.Add(time.Minute)},
		{URL: "https://b:8006/api2/json", Healthy: true, Active: true},
	}, creds.redact)
	if c := readyCondition(pc); c.Reason != v1alpha1.ReasonAvailable || c.Message != "" {
		t.Errorf("condition with every endpoint healthy = %+v, want Available", c)
	}
}
