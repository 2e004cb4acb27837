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

package container

import (
	"context"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func TestCreate(t *testing.T) {
	cases := map[string]struct {
		reason string
		sim    pvesim.Options
		setup  func(t *testing.T, f *fixture) *v1alpha1.Container
		// again runs Create a second time after the first one's task ended.
		again bool
		want  verbWant
	}{
		"OSTemplate": {
			reason: "A creation from an archive stores the VMID, creates with our marker and records the source.",
			setup: func(_ *testing.T, _ *fixture) *v1alpha1.Container {
				cr := newContainer("ost", fromOSTemplate)
				cr.Spec.Template.Features = &v1alpha1.ContainerFeatures{Nesting: true}
				cr.Spec.Template.Disk = append(cr.Spec.Template.Disk, v1alpha1.ContainerDisk{Storage: "local-lvm", Size: 2, Path: "/srv"})
				cr.Spec.Template.Network[0].VLAN = 20
				return cr
			},
			want: verbWant{events: []string{"Creating"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.Container) {
				g := f.ct(t, guesttest.VMIDOf(t, cr))
				waitTask(t, f, cr.GetAnnotations()[guest.AnnotationCreateTask])
				g = f.ct(t, g.VMID)
				if g.Config["features"] != "nesting=1" || !strings.Contains(g.Config["mp0"], "mp=/srv") || !strings.Contains(g.Config["net0"], "tag=20") {
					t.Errorf("config %v: want nesting, mp0 at /srv and VLAN 20", g.Config)
				}
				if cr.GetAnnotations()[annotationSource] != sourceOSTemplate+debianVolume {
					t.Errorf("source annotation = %q", cr.GetAnnotations()[annotationSource])
				}
			}},
		},
		"CloneUnknownTemplate": {
			reason: "A clone of a template that does not exist says which.",
			setup: func(_ *testing.T, _ *fixture) *v1alpha1.Container {
				return newContainer("notpl", func(tpl *v1alpha1.ContainerTemplate) { tpl.Name = "nope" })
			},
			want: verbWant{err: guest.ErrTemplateNotFound},
		},
		"LinkedClone": {
			reason: "fullClone false links the clone to the template's volumes.",
			setup: func(_ *testing.T, _ *fixture) *v1alpha1.Container {
				return newContainer("linked", func(tpl *v1alpha1.ContainerTemplate) { tpl.Name, tpl.FullClone = testTemplate, ptr.To(false) })
			},
			want: verbWant{events: []string{"Cloning"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.Container) {
				if !f.log.Mentions("linked clone") {
					t.Error("the Cloning event does not say linked")
				}
			}},
		},
		"ImagePullFirst": {
			reason: "An image not on the storage is pulled first; no container yet.",
			setup:  func(_ *testing.T, _ *fixture) *v1alpha1.Container { return newContainer("pull", fromImage) },
			want: verbWant{events: []string{"PullingImage"}, noEvents: []string{"Creating"}, pve: func(t *testing.T, _ *fixture, cr *v1alpha1.Container) {
				if meta.GetExternalName(cr) != "" || cr.GetAnnotations()[annotationPullTask] == "" {
					t.Errorf("annotations %v: want a pull task and no VMID yet", cr.GetAnnotations())
				}
			}},
		},
		"NodeWithoutSkopeo": {
			reason: "A pull that fails on a node without skopeo is an error with PVE's message, and is retried later.",
			sim:    pvesim.Options{Nodes: []string{testNode, otherNode}, NodesWithoutSkopeo: []string{testNode}},
			setup:  func(_ *testing.T, _ *fixture) *v1alpha1.Container { return newContainer("noskopeo", fromImage) },
			again:  true,
			want: verbWant{pveText: "No such file or directory", pve: func(t *testing.T, _ *fixture, cr *v1alpha1.Container) {
				if cr.GetAnnotations()[annotationPullTask] != "" {
					t.Error("the failed pull is still recorded: it would never be retried")
				}
			}},
		},
		"StaleImageFile": {
			reason: "A file under the image's name pulled from another reference is removed before the pull.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				if err := f.sim.AddVolume(testNode, "local:vztmpl/nginx_1.27.tar"); err != nil {
					t.Fatal(err)
				}
				cr := newContainer("stale", fromImage)
				meta.AddAnnotations(cr, map[string]string{annotationPulled: "ghcr.io/example/nginx:1.27"})
				return cr
			},
			want: verbWant{events: []string{"RemovingImageFile"}, noEvents: []string{"PullingImage"}},
		},
		"ImageFileAdopted": {
			reason: "A file under the image's name nobody pulled for this resource is used as it is.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				if err := f.sim.AddVolume(testNode, "local:vztmpl/nginx_1.27.tar"); err != nil {
					t.Fatal(err)
				}
				return newContainer("adopt", fromImage)
			},
			want: verbWant{events: []string{"Creating"}, noEvents: []string{"PullingImage", "RemovingImageFile"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.sim)
			cr := tc.setup(t, f)
			f.store(t, cr, true)
			_, err := f.external().Create(context.Background(), cr)
			if tc.again {
				if upid := cr.GetAnnotations()[annotationPullTask]; upid != "" {
					waitTask(t, f, upid)
				}
				_, err = f.external().Create(context.Background(), cr)
			}
			tc.want.check(t, tc.reason, f, cr, err)
		})
	}
}
