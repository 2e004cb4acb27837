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

package migrate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// Connection is a kubemox ProxmoxConnection with the client built from it
// and what it sees of the cluster; Problem says why it cannot be used.
type Connection struct {
	Name    string
	Client  *pve.Client
	Version string
	Guests  []pve.Resource
	Problem string
}

// connectionConfig builds the client configuration of a kubemox
// connection, reading a referenced Secret's key when the credential is not
// inline.
func connectionConfig(ctx context.Context, kube client.Client, obj *unstructured.Unstructured) (pve.Config, error) {
	spec, _, _ := unstructured.NestedMap(obj.Object, keySpec)
	cfg := pve.Config{Endpoint: str(spec, "endpoint"), Username: str(spec, "username"), TokenID: str(spec, "tokenID")}
	cfg.InsecureSkipVerify, _, _ = unstructured.NestedBool(spec, "insecureSkipVerify")
	var err error
	if cfg.Password, err = inlineOrSecret(ctx, kube, spec, "password", "passwordFrom"); err != nil {
		return cfg, err
	}
	if cfg.Secret, err = inlineOrSecret(ctx, kube, spec, "secret", "secretFrom"); err != nil {
		return cfg, err
	}
	if ca := str(spec, "caBundle"); ca != "" {
		cfg.CAPEM = []byte(ca)
	}
	return cfg, nil
}

// inlineOrSecret is spec[inline], or the key of the Secret spec[from]
// names.
func inlineOrSecret(ctx context.Context, kube client.Client, spec map[string]any, inline, from string) (string, error) {
	if v := str(spec, inline); v != "" {
		return v, nil
	}
	ref, ok := spec[from].(map[string]any)
	if !ok {
		return "", nil
	}
	s := &corev1.Secret{}
	key := client.ObjectKey{Namespace: str(ref, "namespace"), Name: str(ref, keyName)}
	if err := kube.Get(ctx, key, s); err != nil {
		return "", errors.Wrapf(err, "cannot read Secret %s named by %s", key, from)
	}
	v, ok := s.Data[str(ref, "key")]
	if !ok {
		return "", errors.Errorf("Secret %s named by %s has no key %q", key, from, str(ref, "key"))
	}
	return string(v), nil
}

// Connect builds a client for every kubemox connection, verifies its
// credential and lists its guests; only reads go to Proxmox VE.
func Connect(ctx context.Context, kube client.Client, inv *Inventory) map[string]*Connection {
	out := map[string]*Connection{}
	for _, s := range inv.objectsOf("ProxmoxConnection") {
		c := &Connection{Name: s.Obj.GetName()}
		out[c.Name] = c
		if err := c.open(ctx, kube, s.Obj); err != nil {
			c.Problem = err.Error()
		}
	}
	return out
}

func (c *Connection) open(ctx context.Context, kube client.Client, obj *unstructured.Unstructured) error {
	cfg, err := connectionConfig(ctx, kube, obj)
	if err != nil {
		return err
	}
	if c.Client, err = pve.New(cfg); err != nil {
		return errors.Wrap(err, "cannot build a Proxmox VE client")
	}
	if c.Version, err = c.Client.Verify(ctx); err != nil {
		return errors.Wrap(err, "the connection does not authenticate")
	}
	if c.Guests, err = c.Client.ClusterResources(ctx); err != nil {
		return errors.Wrap(err, "cannot list the cluster's guests")
	}
	return nil
}

// Find resolves a guest the way kubemox finds one: by name, on node when
// given. Two guests with the name, or none, is a question for a human,
// never a guess.
func (c *Connection) Find(typ, name, node string) (pve.Resource, error) {
	var hits []pve.Resource
	for _, g := range c.Guests {
		if g.Name == name && (typ == "" || g.Type == typ) && (node == "" || g.Node == node) {
			hits = append(hits, g)
		}
	}
	where := "in the cluster"
	if node != "" {
		where = "on node " + node
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return pve.Resource{}, errors.Errorf("no %s guest named %q %s (renamed or deleted?)", typ, name, where)
	default:
		sort.Slice(hits, func(i, j int) bool { return hits[i].VMID < hits[j].VMID })
		ids := make([]string, 0, len(hits))
		for _, h := range hits {
			ids = append(ids, fmt.Sprintf("%d", h.VMID))
		}
		return pve.Resource{}, errors.Errorf("%d guests named %q %s (VMIDs %s): kubemox cannot tell them apart; rename one in Proxmox VE",
			len(hits), name, where, strings.Join(ids, ", "))
	}
}

// str is m[key] when it is a string.
func str(m map[string]any, key string) string {
	v, _ := m[key].(string)
	return v
}
