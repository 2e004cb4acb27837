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

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// Every cloud-init row names a field of its API struct and a key of the
// client table that knows its codec: a typo in either would send nothing.
func TestCloudInitRowsNameTheirFieldAndKey(t *testing.T) {
	cases := map[string]struct {
		fields Fields
		table  pve.FieldTable
		obj    any
	}{
		"CloudInitFields":      {CloudInitFields, pve.QEMUCloudInitFields, &v1alpha1.CloudInitConfig{}},
		"IPConfigFields":       {IPConfigFields, pve.QEMUIPConfigFields, &v1alpha1.NICIPConfig{IPv4: &v1alpha1.IPv4Config{}, IPv6: &v1alpha1.IPv6Config{}}},
		"LegacyIPConfigFields": {LegacyIPConfigFields, pve.QEMUIPConfigFields, &v1alpha1.IPConfig{}},
		"CustomFields":         {CustomFields, pve.QEMUCICustomFields, &v1alpha1.CloudInitCustom{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			values := tc.fields.Values(tc.obj)
			for _, f := range tc.fields {
				if _, ok := values[f.Key]; !ok {
					t.Errorf("%s names no field of %T", f.Path, tc.obj)
				}
				if _, ok := tc.table[f.Key]; !ok {
					t.Errorf("%s sends %s, which the client's table does not know", f.Path, f.Key)
				}
			}
		})
	}
}

// The keys a cloudInitConfig writes to a guest that has none, through the
// tables: each value encoded by its key's codec.
func TestCloudInitOfRequestBody(t *testing.T) {
	no := false
	cases := map[string]struct {
		reason string
		ci     *v1alpha1.CloudInitConfig
		want   map[string]string
	}{
		"Everything": {
			reason: "Each field reaches its key; sshkeys is URL-encoded, ipconfigN and cicustom are property strings in PVE's option order.",
			ci: &v1alpha1.CloudInitConfig{
				User: "debian", SSHKeys: []string{"ssh-ed25519 AAAA me@x", "ssh-rsa BBBB you@y"}, DNSDomain: "example.org",
				DNSServers: []string{"192.0.2.53", "192.0.2.54"}, UpgradePackages: &no,
				IPConfig: &v1alpha1.IPConfig{IP: "192.0.2.10", CIDR: "24", Gateway: "192.0.2.1"},
				IPConfigs: []v1alpha1.NICIPConfig{
					{IPv6: &v1alpha1.IPv6Config{Address: "auto"}},
					{},
					{IPv4: &v1alpha1.IPv4Config{Address: "dhcp"}, IPv6: &v1alpha1.IPv6Config{Address: "2001:db8::10/64", Gateway: "2001:db8::1"}},
				},
				Custom: &v1alpha1.CloudInitCustom{UserData: "user.yaml", VendorData: "cephfs:snippets/vendor.yaml"},
			},
			want: map[string]string{
				"ciuser": "debian", "sshkeys": "ssh-ed25519%20AAAA%20me%40x%0Assh-rsa%20BBBB%20you%40y", "searchdomain": "example.org",
				"nameserver": "192.0.2.53 192.0.2.54", "ciupgrade": "0",
				"ipconfig0": "ip=192.0.2.10/24,gw=192.0.2.1", "ipconfig1": "ip6=auto",
				"ipconfig3": "ip=dhcp,ip6=2001:db8::10/64,gw6=2001:db8::1",
				"cicustom":  "user=local:snippets/user.yaml,vendor=cephfs:snippets/vendor.yaml",
			},
		},
		"Nothing": {
			reason: "An empty cloudInitConfig asks for ciupgrade=1, which a guest without the key has (PVE's default), so nothing is written.",
			ci:     &v1alpha1.CloudInitConfig{},
			want:   map[string]string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := pve.Diff(pve.VMSpec{CloudInit: CloudInitOf(tc.ci)}, pve.GuestConfig{}).Set
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCloudInitOf(...) body: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
