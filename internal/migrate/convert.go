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
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// connection moves a kubemox connection's inline credentials into a Secret
// in the secret namespace, unless KeepInline.
func (p *planner) connection(it *Item) {
	c := p.conns[it.Source.Obj.GetName()]
	if c != nil && c.Problem != "" {
		it.Problems = append(it.Problems, c.Problem)
	}
	it.Action = "kept (cluster-scoped)"
	if c != nil && c.Version != "" {
		it.Action += ", authenticates to Proxmox VE " + c.Version
	}
	if p.opts.KeepInline {
		return
	}
	secret := &corev1.Secret{StringData: map[string]string{}}
	secret.Name, secret.Namespace = it.Manifest.GetName()+"-credentials", p.opts.SecretNamespace
	for _, f := range []struct{ inline, from, key string }{{"password", "passwordFrom", "password"}, {"secret", "secretFrom", "token"}} {
		v, ok, _ := unstructured.NestedString(it.Manifest.Object, keySpec, f.inline)
		if !ok || v == "" {
			continue
		}
		secret.StringData[f.key] = v
		unstructured.RemoveNestedField(it.Manifest.Object, keySpec, f.inline)
		ref := map[string]any{keyName: secret.Name, "namespace": secret.Namespace, "key": f.key}
		_ = unstructured.SetNestedMap(it.Manifest.Object, ref, keySpec, f.from)
	}
	if len(secret.StringData) > 0 {
		it.Secrets = append(it.Secrets, secret)
		it.Action += "; inline credentials move to a Secret"
	}
}

// connFor is the connection an object names (kubemox's connectionRef), or
// the only one there is; nil with a problem recorded otherwise.
func (p *planner) connFor(it *Item) *Connection {
	name, _, _ := unstructured.NestedString(it.Manifest.Object, keySpec, "connectionRef", keyName)
	if name == "" {
		if len(p.conns) != 1 {
			it.Problems = append(it.Problems, fmt.Sprintf("no connectionRef, and %d ProxmoxConnections to choose from", len(p.conns)))
			return nil
		}
		for n := range p.conns {
			name = n
		}
		_ = unstructured.SetNestedField(it.Manifest.Object, name, keySpec, "connectionRef", keyName)
	}
	c, ok := p.conns[name]
	switch {
	case !ok:
		it.Problems = append(it.Problems, fmt.Sprintf("its ProxmoxConnection %q does not exist", name))
		return nil
	case c.Problem != "":
		it.Problems = append(it.Problems, fmt.Sprintf("its ProxmoxConnection %q cannot be used: %s", name, c.Problem))
		return nil
	}
	return c
}

// guestFields are where each guest kind keeps its Proxmox VE name and
// node.
var guestFields = map[string][2]string{
	kindVM:       {keyName, "nodeName"},
	"Container":  {keyName, "nodeName"},
	kindTemplate: {keyName, "node"},
}

// guest resolves a VM, container or template by name on its node, as
// kubemox finds it, and makes its VMID the external name.
func (p *planner) guest(it *Item) {
	f := guestFields[it.Source.Kind.Name]
	name, _, _ := unstructured.NestedString(it.Manifest.Object, keySpec, f[0])
	if name == "" {
		name = it.Manifest.GetName()
	}
	node, _, _ := unstructured.NestedString(it.Manifest.Object, keySpec, f[1])
	p.moveGuestPasswords(it)
	c := p.connFor(it)
	if c == nil {
		return
	}
	g, err := c.Find(it.Source.Kind.Guest, name, node)
	if err != nil {
		it.Problems = append(it.Problems, err.Error())
		return
	}
	if it.Source.Kind.Name == kindTemplate && !g.Template {
		it.Problems = append(it.Problems, fmt.Sprintf("guest %d named %q is not a template", g.VMID, name))
		return
	}
	setExternalName(it.Manifest, strconv.Itoa(g.VMID))
	if it.Source.Kind.Name == kindVM {
		p.vmids[it.Source.Obj.GetName()] = guestAt{vmid: g.VMID, node: g.Node}
	}
	it.Action = fmt.Sprintf("observe VMID %d on node %s", g.VMID, g.Node)
	if set, ok := controllingSet(it.Source.Obj); ok {
		it.Action += ", adopted by VirtualMachineSet " + set
	}
}

// passwordPaths are where each kind can hold an inline guest password
// (cloud-init's, or a container's root password), and the suffix of the
// Secret it moves to.
var passwordPaths = map[string][]struct {
	path   []string
	suffix string
}{
	kindVM: {
		{[]string{keySpec, "cloudInitConfig"}, "-cloudinit"},
		{[]string{keySpec, "template", "cloudInitConfig"}, "-cloudinit"},
		{[]string{keySpec, "vmSpec", "cloudInitConfig"}, "-cloudinit"},
	},
	kindTemplate: {{[]string{keySpec, "cloudInitConfig"}, "-cloudinit"}},
	"Container":  {{[]string{keySpec, "template"}, "-root"}},
}

// moveGuestPasswords moves inline guest passwords into a Secret in the
// object's new namespace (passwordFrom beside where password was).
func (p *planner) moveGuestPasswords(it *Item) {
	if p.opts.KeepInline {
		return
	}
	for _, at := range passwordPaths[it.Source.Kind.Name] {
		pw, ok, _ := unstructured.NestedString(it.Manifest.Object, append(at.path, "password")...)
		if !ok || pw == "" {
			continue
		}
		s := &corev1.Secret{StringData: map[string]string{"password": pw}}
		s.Name, s.Namespace = it.Manifest.GetName()+at.suffix, it.Manifest.GetNamespace()
		unstructured.RemoveNestedField(it.Manifest.Object, append(at.path, "password")...)
		_ = unstructured.SetNestedMap(it.Manifest.Object, map[string]any{keyName: s.Name, "key": "password"}, append(at.path, "passwordFrom")...)
		it.Secrets = append(it.Secrets, s)
	}
}

// set exports a VirtualMachineSet in Observe mode: it adopts its VMs
// (exported beside it, named <set>-<i> as kubemox names them) and never
// clones one.
func (p *planner) set(it *Item) {
	_ = unstructured.SetNestedStringSlice(it.Manifest.Object, []string{"Observe"}, keySpec, "managementPolicies")
	replicas, _, _ := unstructured.NestedInt64(it.Manifest.Object, keySpec, "replicas")
	name := it.Source.Obj.GetName()
	var children []string
	for _, vm := range p.inv.objectsOf(kindVM) {
		if set, ok := controllingSet(vm.Obj); ok && set == name {
			children = append(children, vm.Obj.GetName())
		}
	}
	sort.Strings(children)
	for i := range int(replicas) {
		if !contains(children, name+"-"+strconv.Itoa(i)) {
			it.Problems = append(it.Problems, fmt.Sprintf("replica %s-%d has no kubemox VirtualMachine: the set would clone it once managed", name, i))
		}
	}
	it.Action = fmt.Sprintf("observe, adopting its %d VirtualMachines %v by name", len(children), children)
}

// certificate makes the node the external name and moves an inline
// certificate and key into a kubernetes.io/tls Secret (tlsSecretRef).
func (p *planner) certificate(ctx context.Context, it *Item) {
	node, _, _ := unstructured.NestedString(it.Manifest.Object, keySpec, "nodeName")
	if node == "" {
		node, _, _ = unstructured.NestedString(it.Manifest.Object, keySpec, "proxmoxCertSpec", "nodeName")
		_ = unstructured.SetNestedField(it.Manifest.Object, node, keySpec, "nodeName")
	}
	p.moveCertificate(it)
	c := p.connFor(it)
	if c == nil {
		return
	}
	infos, err := c.Client.Certificates(ctx, node)
	if err != nil {
		it.Problems = append(it.Problems, err.Error())
		return
	}
	for _, i := range infos {
		if i.Filename == pve.CustomCertificateFile {
			setExternalName(it.Manifest, node)
			it.Action = fmt.Sprintf("observe node %s's custom certificate (%s)", node, i.Subject)
			return
		}
	}
	it.Problems = append(it.Problems, fmt.Sprintf("node %s has no custom certificate to observe", node))
}

func (p *planner) moveCertificate(it *Item) {
	crt, _, _ := unstructured.NestedString(it.Manifest.Object, keySpec, "proxmoxCertSpec", "certificate")
	key, _, _ := unstructured.NestedString(it.Manifest.Object, keySpec, "proxmoxCertSpec", "privateKey")
	if p.opts.KeepInline || crt == "" || key == "" {
		return
	}
	s := &corev1.Secret{Type: corev1.SecretTypeTLS, StringData: map[string]string{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}}
	s.Name, s.Namespace = it.Manifest.GetName()+"-tls", it.Manifest.GetNamespace()
	unstructured.RemoveNestedField(it.Manifest.Object, keySpec, "proxmoxCertSpec", "certificate")
	unstructured.RemoveNestedField(it.Manifest.Object, keySpec, "proxmoxCertSpec", "privateKey")
	_ = unstructured.SetNestedField(it.Manifest.Object, s.Name, keySpec, "tlsSecretRef", keyName)
	it.Secrets = append(it.Secrets, s)
}

// download makes the volume id (storage:content/filename) the external
// name, once the file is found on its node.
func (p *planner) download(ctx context.Context, it *Item) {
	spec, _, _ := unstructured.NestedMap(it.Manifest.Object, keySpec)
	storage := str(spec, "storage")
	if storage == "" {
		storage = "local"
	}
	volid := storage + ":" + str(spec, "content") + "/" + str(spec, "filename")
	c := p.connFor(it)
	if c == nil {
		return
	}
	_, found, err := c.Client.StorageVolume(ctx, str(spec, "node"), volid, str(spec, "content"))
	switch {
	case err != nil:
		it.Problems = append(it.Problems, err.Error())
	case !found:
		it.Problems = append(it.Problems, fmt.Sprintf("no file %s on node %s", volid, str(spec, "node")))
	default:
		setExternalName(it.Manifest, volid)
		it.Action = fmt.Sprintf("observe file %s on node %s", volid, str(spec, "node"))
	}
}

// snapshotTimeLayout is how kubemox named a snapshot without snapshotName.
const snapshotTimeLayout = "snapshot_2006_01_02T15_04_05Z"

// snapshot makes the snapshot's name in Proxmox VE the external name and,
// when its VM lands in another namespace, names the VM by VMID and node.
func (p *planner) snapshot(ctx context.Context, it *Item) {
	vmName, _, _ := unstructured.NestedString(it.Manifest.Object, keySpec, "virtualMachineName")
	at, ok := p.vmids[vmName]
	vm := p.vms[vmName]
	if !ok || vm == nil {
		it.Problems = append(it.Problems, fmt.Sprintf("its VirtualMachine %q was not resolved (see that object)", vmName))
		return
	}
	if vm.Manifest.GetNamespace() != it.Manifest.GetNamespace() {
		unstructured.RemoveNestedField(it.Manifest.Object, keySpec, "virtualMachineName")
		_ = unstructured.SetNestedField(it.Manifest.Object, int64(at.vmid), keySpec, "vmid")
		_ = unstructured.SetNestedField(it.Manifest.Object, at.node, keySpec, "nodeName")
	}
	c := p.connFor(it)
	if c == nil {
		return
	}
	snaps, err := c.Client.Snapshots(ctx, pve.GuestRef{Type: pve.QEMU, Node: at.node, VMID: at.vmid})
	if err != nil {
		it.Problems = append(it.Problems, err.Error())
		return
	}
	name, err := snapshotName(it.Source.Obj, snaps)
	if err != nil {
		it.Problems = append(it.Problems, err.Error())
		return
	}
	setExternalName(it.Manifest, name)
	it.Action = fmt.Sprintf("observe snapshot %s of VMID %d", name, at.vmid)
	if _, moved, _ := unstructured.NestedInt64(it.Manifest.Object, keySpec, "vmid"); moved {
		it.Action += fmt.Sprintf(" (vmid form: its VM lands in namespace %s)", vm.Manifest.GetNamespace())
	}
}

// snapshotName is the external name a human set on the kubemox object, or
// spec.snapshotName, or the name kubemox derived from the time it took the
// snapshot; it must exist on the guest.
func snapshotName(obj *unstructured.Unstructured, snaps []pve.Snapshot) (string, error) {
	names := map[string]bool{}
	for _, s := range snaps {
		names[s.Name] = true
	}
	n := obj.GetAnnotations()[annotationExternalName]
	if n == "" {
		n, _, _ = unstructured.NestedString(obj.Object, keySpec, "snapshotName")
	}
	if n != "" {
		if !names[n] {
			return "", fmt.Errorf("the guest has no snapshot %q", n)
		}
		return n, nil
	}
	var candidates []string
	ts, _, _ := unstructured.NestedString(obj.Object, keySpec, "timestamp")
	for _, raw := range []string{ts, obj.GetCreationTimestamp().UTC().Format(time.RFC3339)} {
		t, err := time.Parse(time.RFC3339, raw)
		if err == nil && names[t.UTC().Format(snapshotTimeLayout)] {
			candidates = append(candidates, t.UTC().Format(snapshotTimeLayout))
		}
	}
	if len(candidates) == 0 {
		return "", fmt.Errorf("no snapshotName, and no snapshot named after its time: set the annotation %s to its name in Proxmox VE", annotationExternalName)
	}
	return candidates[0], nil
}

func setExternalName(u *unstructured.Unstructured, name string) {
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	if _, set := ann[annotationExternalName]; !set {
		ann[annotationExternalName] = name
	}
	u.SetAnnotations(ann)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func sortedStrings(s []string) []string {
	sort.Strings(s)
	return s
}
