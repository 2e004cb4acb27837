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

package e2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// The kubemox shapes of issue 23, written as a kubemox user writes them
// (our own manifests, in kubemox's field names), applied to the API server
// and the provider with the simulator. Each becomes Ready, or shows the
// condition docs/kinds/virtualmachinetemplate.md documents.

// talosShapes are a template from a disk image shipped as .iso (content
// iso, as kubemox's Talos example), a VM cloned from it, a scratch VM with
// custom user data, and one with an optional password Secret that does not
// exist. NS is replaced by the test's namespace; ROOT and CONN by the
// connections.
const talosShapes = `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachineTemplate
metadata: {name: talos, namespace: NS}
spec:
  connectionRef: {name: ROOT}
  name: NS-talos
  node: lowtower
  imageConfig:
    content: iso
    filename: NS-talos.iso
    node: lowtower
    storage: local
    url: https://factory.example/image/metal-amd64.iso
  cloudInitConfig:
    dnsServers: [192.0.2.53]
  virtualMachineConfig:
    sockets: 1
    cores: 2
    memory: 2048
    network: {model: virtio, bridge: vmbr0}
  additionalConfig: {cpu: x86-64-v2, agent: enabled=true}
---
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachine
metadata: {name: talos-cp-0, namespace: NS}
spec:
  connectionRef: {name: CONN}
  name: NS-cp-0
  nodeName: lowtower
  template:
    name: NS-talos
    cores: 2
    socket: 1
    memory: 2048
    disk: [{storage: local-lvm, size: 10, device: scsi0}]
    network: [{model: virtio, bridge: vmbr0}]
---
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachine
metadata: {name: custom-user-data, namespace: NS}
spec:
  connectionRef: {name: CONN}
  name: NS-custom
  nodeName: lowtower
  vmSpec:
    cores: 1
    memory: 1024
    disk: [{storage: local-lvm, size: 4, device: scsi0}]
    network: [{model: virtio, bridge: vmbr0}]
    cloudInitConfig:
      user: ops
      custom: {userData: NS-user.yaml}
---
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachine
metadata: {name: optional-password, namespace: NS}
spec:
  connectionRef: {name: CONN}
  name: NS-optional
  nodeName: lowtower
  vmSpec:
    cores: 1
    memory: 1024
    disk: [{storage: local-lvm, size: 4, device: scsi0}]
    network: [{model: virtio, bridge: vmbr0}]
    cloudInitConfig:
      user: ops
      passwordFrom: {name: not-there-yet, key: password, optional: true}
`

// conditionShapes show a documented condition: a snippet not on the node,
// and a resource without connectionRef where no connection "default"
// exists.
const conditionShapes = `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachine
metadata: {name: missing-snippet, namespace: NS}
spec:
  connectionRef: {name: CONN}
  name: NS-missing
  nodeName: lowtower
  vmSpec:
    cores: 1
    memory: 1024
    disk: [{storage: local-lvm, size: 4, device: scsi0}]
    network: [{model: virtio, bridge: vmbr0}]
    cloudInitConfig:
      custom: {userData: NS-absent.yaml}
---
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: StorageDownloadURL
metadata: {name: no-connection-ref, namespace: NS}
spec:
  content: iso
  filename: NS-debian.iso
  node: lowtower
  storage: local
  url: https://cloud.example/debian.iso
`

func TestKubemoxShapesBecomeReady(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "kubemox-shapes-")
	if err := h.Sim.AddVolume(node, "local:snippets/"+ns+"-user.yaml"); err != nil {
		t.Fatal(err)
	}
	objs := apply(t, ns, talosShapes)
	for _, o := range objs {
		h.WaitFor(t, o, "Ready", 3*wait, func() bool { return providertest.ReadyAndSynced(o.(providertest.Conditioned)) })
	}
	if g, ok := guestNamed(ns + "-talos"); !ok || !g.Template || !strings.Contains(g.Config["scsi0"], "size=") {
		t.Errorf("Talos template %+v (found %v): want a template with its disk imported from the .iso", g.Config, ok)
	}
	if g, ok := guestNamed(ns + "-custom"); !ok || g.Config["cicustom"] != "user=local:snippets/"+ns+"-user.yaml" {
		t.Errorf("custom user data: cicustom %q (found %v), want kubemox's user=local:snippets/%s-user.yaml", g.Config["cicustom"], ok, ns)
	}
	if g, ok := guestNamed(ns + "-optional"); !ok || g.Config["cipassword"] != "" {
		t.Errorf("optional password Secret missing: found %v, cipassword set %v, want none", ok, g.Config["cipassword"] != "")
	}
	for i := len(objs) - 1; i >= 0; i-- {
		remove(t, objs[i])
	}
}

func TestKubemoxShapesShowTheirCondition(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "kubemox-conditions-")
	objs := apply(t, ns, conditionShapes)
	want := []string{
		`volume "local:snippets/` + ns + `-absent.yaml" does not exist on node "lowtower"`,
		`ProxmoxConnection "default" does not exist (spec.connectionRef is unset, so the connection named "default" is used)`,
	}
	for i, o := range objs {
		h.WaitFor(t, o, "Synced False: "+want[i], wait, func() bool {
			c := o.(providertest.Conditioned).GetCondition(xpv2.TypeSynced)
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, want[i])
		})
	}
	for _, o := range objs {
		remove(t, o)
	}
}

// apply creates every document of manifests in namespace ns (NS, ROOT and
// CONN replaced), refusing unknown fields as kubectl apply does, and
// returns them as typed objects.
func apply(t *testing.T, ns, manifests string) []client.Object {
	t.Helper()
	manifests = strings.NewReplacer("NS", ns, "ROOT", rootConnName, "CONN", connName).Replace(manifests)
	docs := strings.Split(manifests, "\n---\n")
	out := make([]client.Object, 0, len(docs))
	for _, doc := range docs {
		var head struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatal(err)
		}
		var o client.Object
		switch head.Kind {
		case "VirtualMachineTemplate":
			o = &v1alpha1.VirtualMachineTemplate{}
		case "VirtualMachine":
			o = &v1alpha1.VirtualMachine{}
		case "StorageDownloadURL":
			o = &v1alpha1.StorageDownloadURL{}
		default:
			t.Fatalf("no type for kind %q", head.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), o); err != nil {
			t.Fatalf("%s: %v", head.Kind, err)
		}
		create(t, o)
		out = append(out, o)
	}
	return out
}
