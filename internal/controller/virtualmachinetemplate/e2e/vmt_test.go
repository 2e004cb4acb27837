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
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/virtualmachinetemplate"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// A template is built from its cloud image: the image downloaded by a
// StorageDownloadURL it owns, the VM created with the disk imported, the
// cloud-init drive and keys and the boot order, then converted. Deleting it
// destroys the template.
func TestBuildAndDelete(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "vmt-")
	cr := template(ns)
	create(t, cr)
	h.WaitFor(t, cr, "Ready", wait, func() bool { return providertest.ReadyAndSynced(cr) })

	g, ok := guestNamed(ns)
	if !ok {
		t.Fatal("no template VM in Proxmox")
	}
	want := map[string]string{"template": "1", "boot": "order=scsi0", "ciuser": "debian", "cores": "2", "sockets": "1", "memory": "2048"}
	for k, v := range want {
		if g.Config[k] != v {
			t.Errorf("config %s = %q, want %q", k, g.Config[k], v)
		}
	}
	if !strings.HasPrefix(g.Config["scsi0"], "local-lvm:base-") || !strings.Contains(g.Config["ide2"], "cloudinit") {
		t.Errorf("scsi0 %q ide2 %q: want the imported disk as a base image and a cloud-init drive", g.Config["scsi0"], g.Config["ide2"])
	}
	if meta.GetExternalName(cr) != strconv.Itoa(g.VMID) || cr.Status.Step != v1alpha1.TemplateStepDone {
		t.Errorf("external name %q step %q, want %d Done", meta.GetExternalName(cr), cr.Status.Step, g.VMID)
	}
	sdu := &v1alpha1.StorageDownloadURL{}
	sdu.SetNamespace(ns)
	sdu.SetName("tmpl-image")
	h.WaitFor(t, sdu, "Ready", wait, func() bool { return providertest.ReadyAndSynced(sdu) })
	if owner := sdu.GetOwnerReferences(); len(owner) != 1 || owner[0].Name != cr.Name || owner[0].Kind != "VirtualMachineTemplate" {
		t.Errorf("StorageDownloadURL owners %+v, want the template", owner)
	}

	cr.Spec.VirtualMachineConfig.Cores = 8
	if err := h.Kube.Update(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, cr, "reported out of date", wait, func() bool {
		return cr.GetCondition(virtualmachinetemplate.TypeTemplateUpToDate).Reason == virtualmachinetemplate.ReasonSpecChanged
	})
	if g2, _ := guestNamed(ns); g2.VMID != g.VMID || g2.Config["cores"] != "2" {
		t.Errorf("the template was changed or replaced: VMID %d cores %q", g2.VMID, g2.Config["cores"])
	}

	remove(t, cr)
	h.WaitGone(t, cr, wait)
	if _, ok := h.Sim.Guest(g.VMID); ok {
		t.Error("the template survived the deletion")
	}
}

// kubemox's manifests download the cloud image as iso, which import-from
// refuses: it is downloaded as import content instead, with an event.
func TestISOImageConvertedToImport(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "vmt-iso-")
	cr := template(ns)
	cr.Spec.ImageConfig.Content, cr.Spec.ImageConfig.Filename = "iso", ns+".img"
	create(t, cr)
	h.WaitFor(t, cr, "Ready", wait, func() bool { return providertest.ReadyAndSynced(cr) })
	sdu := &v1alpha1.StorageDownloadURL{}
	sdu.SetNamespace(ns)
	sdu.SetName("tmpl-image")
	h.WaitFor(t, sdu, "Ready", wait, func() bool { return providertest.ReadyAndSynced(sdu) })
	if sdu.Spec.Content != "import" || sdu.Spec.Filename != ns+".qcow2" {
		t.Errorf("image downloaded as %s %s, want import %s.qcow2", sdu.Spec.Content, sdu.Spec.Filename, ns)
	}
	if !hasEvent(t, ns, cr.Name, string(virtualmachinetemplate.ReasonImageConverted)) {
		t.Error("no event says the image was converted")
	}
	remove(t, cr)
	h.WaitGone(t, cr, wait)
}

// A VirtualMachine clones the template by reference (linked). A template
// that a linked clone still uses is not destroyed: Proxmox VE's
// refusal shows on Synced, and the deletion goes through once the clone is
// gone.
func TestDeleteRefusedWhileLinkedClonesUseIt(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "vmt-linked-")
	cr := template(ns)
	create(t, cr)
	h.WaitFor(t, cr, "Ready", wait, func() bool { return providertest.ReadyAndSynced(cr) })
	vmid, _ := strconv.Atoi(meta.GetExternalName(cr))

	vm := &v1alpha1.VirtualMachine{}
	vm.SetNamespace(ns)
	vm.SetName("clone")
	full := false
	vm.Spec = v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
		Name:         ns + "-clone", NodeName: node,
		// By reference to the VirtualMachineTemplate, not by Proxmox name.
		Template: &v1alpha1.VirtualMachineCloneSpec{TemplateRef: &v1alpha1.TemplateReference{Name: cr.Name}, FullClone: &full},
	}
	create(t, vm)
	h.WaitFor(t, vm, "Ready", wait, func() bool { return providertest.ReadyAndSynced(vm) })

	remove(t, cr)
	h.WaitFor(t, cr, "refused by Proxmox VE", wait, func() bool {
		c := cr.GetCondition(xpv2.TypeSynced)
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "still in use by linked clone")
	})
	if _, ok := h.Sim.Guest(vmid); !ok {
		t.Fatal("a template linked clones use was destroyed")
	}
	remove(t, vm)
	h.WaitGone(t, vm, wait)
	h.WaitGone(t, cr, wait)
	if _, ok := h.Sim.Guest(vmid); ok {
		t.Error("the template survived once unused")
	}
}

func hasEvent(t *testing.T, ns, name, reason string) bool {
	t.Helper()
	for _, e := range h.Events(t, ns, name) {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

// Every example applies and becomes Ready: the template, and the
// VirtualMachine that clones it by reference.
func TestExamplesBecomeReady(t *testing.T) {
	require(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "virtualmachinetemplate", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ns := h.Namespace(t, "vmt-example-")
			objs := manifests(t, file)
			for _, u := range objs {
				u.SetNamespace(ns)
				create(t, u)
			}
			for _, u := range objs {
				obj := &unstructured.Unstructured{}
				obj.SetGroupVersionKind(u.GroupVersionKind())
				obj.SetNamespace(ns)
				obj.SetName(u.GetName())
				h.WaitFor(t, obj, "Ready", 2*wait, func() bool { return unstructuredReady(obj) })
			}
			for i := len(objs) - 1; i >= 0; i-- {
				remove(t, objs[i])
				h.WaitGone(t, objs[i], wait)
			}
		})
	}
}

// manifests reads every YAML document of file.
func manifests(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
	return out
}

func unstructuredReady(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	ready, synced := false, false
	for _, c := range conds {
		m, _ := c.(map[string]any)
		switch {
		case m["type"] == "Ready" && m["status"] == "True":
			ready = true
		case m["type"] == "Synced" && m["status"] == "True":
			synced = true
		}
	}
	return ready && synced
}
