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

package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretRefs(t *testing.T) {
	pw := &SecretKeySelector{Name: "creds", Namespace: "ns", Key: "password"}
	tok := &SecretKeySelector{Name: "creds", Namespace: "ns", Key: "token"}
	ca := &SecretKeySelector{Name: "ca", Namespace: "other", Key: "ca.crt"}
	cases := map[string]struct {
		spec ProxmoxConnectionSpec
		want []SecretKeySelector
	}{
		"Inline":           {spec: ProxmoxConnectionSpec{Username: "root@pam", Password: "x"}, want: []SecretKeySelector{}},
		"PasswordAndCA":    {spec: ProxmoxConnectionSpec{PasswordFrom: pw, CAFrom: ca}, want: []SecretKeySelector{*pw, *ca}},
		"TokenSecret":      {spec: ProxmoxConnectionSpec{SecretFrom: tok}, want: []SecretKeySelector{*tok}},
		"AllInStableOrder": {spec: ProxmoxConnectionSpec{CAFrom: ca, SecretFrom: tok, PasswordFrom: pw}, want: []SecretKeySelector{*pw, *tok, *ca}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.spec.SecretRefs()); diff != "" {
				t.Errorf("SecretRefs(): -want, +got:\n%s", diff)
			}
		})
	}
}
