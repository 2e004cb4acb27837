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

// The cloudInitConfig's field tables: each row maps an API field to the
// PVE key pve.QEMUCloudInitFields (or its sub-tables) knows the codec and
// apply mode of. The password has no row: it never reads back, and comes
// from a Secret (see CloudInitPasswordOf).
var (
	// CloudInitFields are the keys of the cloudInitConfig itself.
	CloudInitFields = Fields{
		{Path: "user", Key: "ciuser"},
		{Path: "sshKeys", Key: "sshkeys"},
		{Path: "dnsDomain", Key: "searchdomain"},
		{Path: "dnsServers", Key: "nameserver"},
		{Path: "upgradePackages", Key: "ciupgrade"},
	}
	// IPConfigFields are the options of one ipConfigs entry (ipconfigN).
	IPConfigFields = Fields{
		{Path: "ipv4.address", Key: "ip"},
		{Path: "ipv4.gateway", Key: "gw"},
		{Path: "ipv6.address", Key: "ip6"},
		{Path: "ipv6.gateway", Key: "gw6"},
	}
	// LegacyIPConfigFields are those of the single ipConfig (ipconfig0);
	// its ip and cidr make one option (see CloudInitOf).
	LegacyIPConfigFields = Fields{
		{Path: "gateway", Key: "gw"},
		{Path: "ipv6", Key: "ip6"},
		{Path: "gatewayIPv6", Key: "gw6"},
	}
	// CustomFields are the snippets of custom (cicustom), each a volume ID
	// or a file kubemox reads from SnippetStorage.
	CustomFields = Fields{
		{Path: "userData", Key: "user"},
		{Path: "metaData", Key: "meta"},
		{Path: "networkData", Key: "network"},
		{Path: "vendorData", Key: "vendor"},
	}
)

// CloudInitOf is a cloudInitConfig in the client layer's terms (the
// password apart: see CloudInitPasswordOf).
func CloudInitOf(ci *v1alpha1.CloudInitConfig) *pve.VMCloudInit {
	out := &pve.VMCloudInit{Config: CloudInitFields.Values(ci)}
	// Written even when unset, as kubemox does: its default is PVE's.
	up := ci.UpgradesPackages()
	out.Config["ciupgrade"] = &up
	if ip := ci.IPConfig; ip != nil {
		opts := LegacyIPConfigFields.Values(ip)
		v4 := ip.IP
		if v4 != "" && v4 != "dhcp" && ip.CIDR != "" {
			v4 += "/" + ip.CIDR
		}
		opts["ip"] = v4
		out.IPConfigs = append(out.IPConfigs, opts)
	}
	for i := range ci.IPConfigs {
		out.IPConfigs = append(out.IPConfigs, IPConfigFields.Values(&ci.IPConfigs[i]))
	}
	if c := ci.Custom; c != nil {
		out.Custom = CustomFields.Values(c)
		for k, v := range out.Custom {
			if name, ok := v.(string); ok {
				out.Custom[k] = SnippetVolume(name)
			}
		}
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
