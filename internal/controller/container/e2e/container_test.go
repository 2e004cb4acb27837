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
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/metrics/metricstest"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Each source creates a running container with the spec's hardware;
// drift made behind the provider's back is corrected, and deleting the
// resource destroys the container.
func TestCreateFromEachSourceDriftAndDelete(t *testing.T) {
	p := require(t)
	ns := p.Namespace(t, "ct-")
	sources := map[string]func(*v1alpha1.ContainerTemplate){
		"from-archive": func(tpl *v1alpha1.ContainerTemplate) { tpl.OSTemplate = archive },
		"from-clone":   func(tpl *v1alpha1.ContainerTemplate) { tpl.Name = templateName },
		"from-image": func(tpl *v1alpha1.ContainerTemplate) {
			tpl.Image = &v1alpha1.ContainerImage{Reference: "docker.io/library/redis:7.4", Storage: "local"}
		},
	}
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			cr := newContainer(ns, name, src)
			create(t, p, cr)
			cr = waitReady(t, p, ns, name)
			vmid := providertest.VMIDOf(t, cr)
			g, ok := p.Sim.Guest(vmid)
			if !ok || g.Kind != "lxc" || g.Status != "running" || g.Config["cores"] != "2" || g.Config["memory"] != "1024" || !strings.Contains(g.Config["rootfs"], "size=8G") {
				t.Fatalf("container %d not as the spec asks: %+v", vmid, g)
			}
			if err := p.Sim.SetGuestConfig(vmid, "cores", "6"); err != nil {
				t.Fatal(err)
			}
			p.WaitEvent(t, ns, name, "DriftCorrected", wait)
			waitContainer(t, p, ns, name, "with cores corrected", func(*v1alpha1.Container) bool {
				g, _ := p.Sim.Guest(vmid)
				return g.Config["cores"] == "2"
			})
			p.DeleteAndWait(t, cr, wait)
			if _, ok := p.Sim.Guest(vmid); ok {
				t.Error("the container survived the deletion")
			}
		})
	}
}

// An existing container is imported with Observe only: its status fills
// and nothing in Proxmox VE changes, not even on deletion.
func TestImportObserveOnly(t *testing.T) {
	p := require(t)
	ns := p.Namespace(t, "ct-")
	const vmid = 460
	if err := p.Sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: node, VMID: vmid, Running: true, Config: map[string]string{
		"hostname": "legacy", "rootfs": "local-lvm:2", "cores": "3", "net0": "name=eth0,bridge=vmbr0,ip=192.0.2.46/24",
		"description": "hand-made",
	}}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	cr := &v1alpha1.Container{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy", Annotations: map[string]string{meta.AnnotationKeyExternalName: "460"}},
		Spec: v1alpha1.ContainerSpec{ResourceSpec: v1alpha1.ResourceSpec{
			ConnectionRef:      &v1alpha1.ConnectionReference{Name: connName},
			ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve},
		}},
	}
	create(t, p, cr)
	cr = waitContainer(t, p, ns, "legacy", "Ready with its address", func(c *v1alpha1.Container) bool {
		return ready(c) && c.Status.Status.IPAddress == "192.0.2.46"
	})
	if cr.Status.Status.Node != node || cr.Status.Status.State != "running" {
		t.Errorf("status %+v", cr.Status.Status)
	}
	p.DeleteAndWait(t, cr, wait)
	g, ok := p.Sim.Guest(vmid)
	if !ok || g.Config["description"] != "hand-made" || g.Config["cores"] != "3" {
		t.Errorf("the imported container changed or went: %+v", g)
	}
}

// A protected container stays in Proxmox VE when its resource is deleted.
func TestDeletionProtection(t *testing.T) {
	p := require(t)
	ns := p.Namespace(t, "ct-")
	cr := newContainer(ns, "kept", func(tpl *v1alpha1.ContainerTemplate) { tpl.OSTemplate = archive })
	cr.Spec.DeletionProtection = true
	create(t, p, cr)
	cr = waitReady(t, p, ns, "kept")
	vmid := providertest.VMIDOf(t, cr)
	p.DeleteAndWait(t, cr, wait)
	if g, ok := p.Sim.Guest(vmid); !ok || g.Status != "running" {
		t.Errorf("the protected container is gone or stopped: %+v", g)
	}
}

// Every example in examples/container is applied (the import's container
// seeded first) and becomes Ready; the password reaches the connection
// details. The examples are deleted afterwards, so a second run starts
// clean.
func TestExamplesBecomeReady(t *testing.T) {
	p := require(t)
	if err := p.Sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: node, VMID: 151, Running: true, Config: map[string]string{
		"hostname": "legacy-ct", "rootfs": "local-lvm:2"}}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	objs := readExamples(t, filepath.Join("..", "..", "..", "..", "examples", "container"))
	for _, u := range objs {
		if u.GetKind() == "Secret" {
			if err := unstructured.SetNestedField(u.Object, rootPassword, "stringData", "password"); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Kube.Create(context.Background(), u); err != nil {
			t.Fatalf("apply %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	t.Cleanup(func() {
		for _, u := range objs {
			p.DeleteAndWait(t, u, wait)
			// envtest runs no garbage collector: the connection Secrets
			// the examples own would outlive them and refuse the next run.
			if name, _, _ := unstructured.NestedString(u.Object, "spec", "writeConnectionSecretToRef", "name"); name != "" {
				p.DeleteAndWait(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: name}}, wait)
			}
		}
	})
	for _, u := range objs {
		if u.GetKind() == v1alpha1.ContainerKind {
			waitReady(t, p, u.GetNamespace(), u.GetName())
		}
	}
	sec := &corev1.Secret{}
	waitContainer(t, p, "default", "web-ct", "with its connection details", func(*v1alpha1.Container) bool {
		err := p.Kube.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "web-ct-connection"}, sec)
		return err == nil && len(sec.Data["ipAddress"]) > 0
	})
	if string(sec.Data["password"]) != rootPassword || string(sec.Data["ipAddress"]) != "192.0.2.20" || string(sec.Data["node"]) != node {
		t.Errorf("connection details: ipAddress %q node %q password set %v", sec.Data["ipAddress"], sec.Data["node"], len(sec.Data["password"]) > 0)
	}
}

// readExamples reads every document of every YAML file in dir.
func readExamples(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples in %s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &u.Object); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(u.Object) > 0 {
				out = append(out, u)
			}
		}
	}
	return out
}

// The Container controller is metered: crossplane-runtime's state metrics
// count Containers by their GVK once one exists, Ready and Synced.
func TestStateMetricsCountContainers(t *testing.T) {
	p := require(t)
	ns := p.Namespace(t, "ct-")
	cr := newContainer(ns, "metered", func(tpl *v1alpha1.ContainerTemplate) { tpl.OSTemplate = archive })
	create(t, p, cr)
	waitReady(t, p, ns, "metered")
	gvk := map[string]string{"gvk": v1alpha1.ContainerGroupVersionKind.String()}
	var s metricstest.Samples
	providertest.Eventually(t, wait, 250*time.Millisecond, func() bool {
		var err error
		s, err = metricstest.Gather(ctrlmetrics.Registry)
		if err != nil {
			return false
		}
		n, _ := s.Sum("crossplane_managed_resource_exists", gvk)
		r, _ := s.Sum("crossplane_managed_resource_ready", gvk)
		return n >= 1 && r >= 1
	}, func() string {
		return fmt.Sprintf("no Container counted by crossplane_managed_resource_exists and _ready: %v", s.Select("crossplane_managed_resource_exists", nil))
	})
	p.DeleteAndWait(t, cr, wait)
}
