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

package proxmox

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// ContainerInterfaces lists a running container's interfaces
// (GET /nodes/{node}/lxc/{vmid}/interfaces; for a stopped one PVE answers
// null, so none).
// Addresses come from ip-addresses (PVE 8.1+), else from inet and inet6.
func (c *Client) ContainerInterfaces(ctx context.Context, ref GuestRef) ([]GuestNetwork, error) {
	var raw []struct {
		Name        wireText `json:"name"`
		HWAddr      wireText `json:"hwaddr"`
		Inet        wireText `json:"inet"`
		Inet6       wireText `json:"inet6"`
		IPAddresses []struct {
			Type    wireText `json:"ip-address-type"`
			Address wireText `json:"ip-address"`
		} `json:"ip-addresses"`
	}
	if err := c.API().Get(ctx, ref.path("/interfaces"), &raw); err != nil {
		return nil, errors.Wrapf(err, "cannot read network interfaces of container %s", ref)
	}
	out := make([]GuestNetwork, 0, len(raw))
	for _, r := range raw {
		n := GuestNetwork{Name: string(r.Name), MAC: string(r.HWAddr)}
		for _, a := range r.IPAddresses {
			n.IPAddresses = append(n.IPAddresses, string(a.Address))
			if string(a.Type) == "inet" || string(a.Type) == "ipv4" {
				n.IPv4 = append(n.IPv4, string(a.Address))
			}
		}
		if len(r.IPAddresses) == 0 {
			n.addCIDR(string(r.Inet), true)
			n.addCIDR(string(r.Inet6), false)
		}
		out = append(out, n)
	}
	return out, nil
}

// addCIDR adds an address given as PVE's inet/inet6 ("10.0.0.5/24").
func (n *GuestNetwork) addCIDR(cidr string, v4 bool) {
	ip, _, _ := strings.Cut(cidr, "/")
	if ip == "" {
		return
	}
	n.IPAddresses = append(n.IPAddresses, ip)
	if v4 {
		n.IPv4 = append(n.IPv4, ip)
	}
}

// UsableAddresses returns every address of ifs that is not loopback or
// link-local, in order.
func UsableAddresses(ifs []GuestNetwork) []string {
	var out []string
	for _, n := range ifs {
		if n.Name == "lo" {
			continue
		}
		for _, a := range n.IPAddresses {
			l := strings.ToLower(a)
			if strings.HasPrefix(l, "127.") || strings.HasPrefix(l, "169.254.") || strings.HasPrefix(l, "fe80:") || l == "::1" {
				continue
			}
			out = append(out, a)
		}
	}
	return out
}

// reUnsafeFileChar is what pve-storage's normalize_content_filename turns
// into '_'.
var reUnsafeFileChar = regexp.MustCompile(`[^a-zA-Z0-9_.-]`)

// OCIImageVolID is the volume oci-registry-pull stores reference as in
// storage: pve-storage keeps what follows the last '/', turns every other
// unsafe character into '_' and appends ".tar", so
// docker.io/library/nginx:1.27 becomes local:vztmpl/nginx_1.27.tar.
func OCIImageVolID(storage, reference string) string {
	name := reference
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return storage + ":vztmpl/" + reUnsafeFileChar.ReplaceAllString(name, "_") + ".tar"
}

// PullOCIImage starts pulling reference into storage on node
// (POST /nodes/{node}/storage/{storage}/oci-registry-pull, PVE 9) and
// returns the task's UPID. PVE refuses to overwrite an existing file, and
// the node needs skopeo.
func (c *Client) PullOCIImage(ctx context.Context, node, storage, reference string) (string, error) {
	p := "/nodes/" + url.PathEscape(node) + "/storage/" + url.PathEscape(storage) + "/oci-registry-pull"
	var raw json.RawMessage
	if err := c.API().Post(ctx, p, map[string]string{"reference": reference}, &raw); err != nil {
		return "", errors.Wrapf(err, "cannot pull OCI image %s into storage %s on node %s", reference, storage, node)
	}
	return c.startedTask(raw)
}

// HasTemplateVolume reports whether storage on node holds the container
// template volid (GET .../content?content=vztmpl).
func (c *Client) HasTemplateVolume(ctx context.Context, node, storage, volid string) (bool, error) {
	p := "/nodes/" + url.PathEscape(node) + "/storage/" + url.PathEscape(storage) + "/content?content=vztmpl"
	var raw []struct {
		VolID wireText `json:"volid"`
	}
	if err := c.API().Get(ctx, p, &raw); err != nil {
		return false, errors.Wrapf(err, "cannot list container templates of storage %s on node %s", storage, node)
	}
	for _, v := range raw {
		if string(v.VolID) == volid {
			return true, nil
		}
	}
	return false, nil
}

// DeleteVolume starts removing volid from storage on node and returns the
// task's UPID ("" when PVE answered without one).
func (c *Client) DeleteVolume(ctx context.Context, node, storage, volid string) (string, error) {
	p := "/nodes/" + url.PathEscape(node) + "/storage/" + url.PathEscape(storage) + "/content/" + url.PathEscape(volid)
	var raw json.RawMessage
	if err := c.API().Delete(ctx, p, &raw); err != nil {
		return "", errors.Wrapf(err, "cannot delete volume %s", volid)
	}
	return c.startedTask(raw)
}
