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
	"context"
	"strings"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
)

// CloudInitPassword is a cloud-init password read for this reconcile only.
// It must never be logged, evented or written to status; its Version (which
// revision of the spec or Secret it came from) is what status records.
type CloudInitPassword struct {
	Value   string
	Version v1alpha1.CloudInitPasswordApplied
}

// CloudInitOf is a cloudInitConfig in the client layer's terms (the
// password apart: see CloudInitPasswordOf).
func CloudInitOf(ci *v1alpha1.CloudInitConfig) *pve.VMCloudInit {
	up := ci.UpgradesPackages()
	out := &pve.VMCloudInit{
		User: ci.User, SSHKeys: ci.SSHKeys, DNSDomain: ci.DNSDomain, DNSServers: ci.DNSServers,
		UpgradePackages: &up,
	}
	if ip := ci.IPConfig; ip != nil {
		v4 := ip.IP
		if v4 != "" && v4 != "dhcp" && ip.CIDR != "" {
			v4 += "/" + ip.CIDR
		}
		out.IPConfigs = append(out.IPConfigs, pve.VMIPConfig{IPv4: v4, GatewayIPv4: ip.Gateway, IPv6: ip.IPv6, GatewayIPv6: ip.GatewayIPv6})
	}
	for _, nic := range ci.IPConfigs {
		var c pve.VMIPConfig
		if nic.IPv4 != nil {
			c.IPv4, c.GatewayIPv4 = nic.IPv4.Address, nic.IPv4.Gateway
		}
		if nic.IPv6 != nil {
			c.IPv6, c.GatewayIPv6 = nic.IPv6.Address, nic.IPv6.Gateway
		}
		out.IPConfigs = append(out.IPConfigs, c)
	}
	if c := ci.Custom; c != nil {
		out.CustomUser, out.CustomMeta = SnippetVolume(c.UserData), SnippetVolume(c.MetaData)
		out.CustomNetwork, out.CustomVendor = SnippetVolume(c.NetworkData), SnippetVolume(c.VendorData)
	}
	return out
}

// SnippetStorage is where kubemox reads a cloudInitConfig.custom snippet
// named without a storage: its cicustom is always user=local:snippets/<name>.
const SnippetStorage = "local"

// SnippetVolume is the volume ID cicustom takes for a custom snippet: a
// bare file name is kubemox's local:snippets/<name>; a value that is
// already a volume ID (storage:snippets/name) is kept, so a snippet on
// another storage can be named too.
func SnippetVolume(name string) string {
	if name == "" || strings.Contains(name, ":") {
		return name
	}
	return SnippetStorage + ":snippets/" + name
}

// SecretKeyReader reads one key of a Secret with its resourceVersion: a
// secrets.Reader (straight from the API server) or a secrets.Memo (again only
// when the Secret's resourceVersion moved).
type SecretKeyReader interface {
	Key(ctx context.Context, nn types.NamespacedName, key string) (secrets.Key, error)
}

// CloudInitPasswordOf returns the cloud-init password of o with its
// version, nil when none is set or an optional passwordFrom Secret or key
// is missing. A passwordFrom Secret is read in o's namespace through keys
// (Secrets are never cached with their data).
func CloudInitPasswordOf(ctx context.Context, keys SecretKeyReader, o metav1.Object, ci *v1alpha1.CloudInitConfig) (*CloudInitPassword, error) {
	if ci.Password != "" {
		return &CloudInitPassword{Value: ci.Password, Version: v1alpha1.CloudInitPasswordApplied{Generation: o.GetGeneration()}}, nil
	}
	ref := ci.PasswordFrom
	if ref == nil {
		return nil, nil
	}
	k, err := keys.Key(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}, ref.Key)
	switch {
	case ref.IsOptional() && (errors.Is(err, secrets.ErrKeyNotFound) || kerrors.IsNotFound(err)):
		// kubemox's optional: no password until the Secret and key exist.
		return nil, nil
	case errors.Is(err, secrets.ErrKeyNotFound):
		return nil, errors.Errorf("Secret %s/%s has no key %q (cloudInitConfig.passwordFrom)", o.GetNamespace(), ref.Name, ref.Key)
	case err != nil:
		return nil, errors.Errorf("%w %s/%s named by cloudInitConfig.passwordFrom: %w", ErrPasswordSecretUnreadable, o.GetNamespace(), ref.Name, err)
	}
	return &CloudInitPassword{Value: string(k.Value), Version: v1alpha1.CloudInitPasswordApplied{Generation: o.GetGeneration(), SecretResourceVersion: k.ResourceVersion}}, nil
}
