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
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func TestUpdate(t *testing.T) {
	cases := map[string]struct {
		reason  string
		setup   func(t *testing.T, f *fixture) *v1alpha1.Container
		running bool
		want    verbWant
	}{
		"DriftCorrected": {
			reason: "Drift on a Ready resource with an unchanged spec is corrected with a warning, the MAC kept.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				cr := newContainer("drift", fromOSTemplate)
				cr.Spec.Template.Network[0].VLAN = 30
				return owned(t, f, cr, true, map[string]string{"cores": "4", "memory": "2048"})
			},
			want: verbWant{events: []string{"DriftCorrected"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.Container) {
				c := f.ct(t, ownedVMID).Config
				if c["cores"] != "2" || c["memory"] != "1024" || !strings.Contains(c["net0"], "tag=30") || !strings.Contains(c["net0"], "hwaddr=BC:24:11:00:07:10") {
					t.Errorf("config %v: want cores 2, memory 1024, VLAN 30 and the MAC kept", c)
				}
			}},
		},
		"GrowRootFS": {
			reason: "A bigger root filesystem is grown by a resize task.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				return owned(t, f, newContainer("grow", fromOSTemplate), true, map[string]string{"rootfs": "local-lvm:4"})
			},
			want: verbWant{events: []string{"Resized"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.Container) {
				waitTask(t, f, cr.Status.LastTask.UPID)
				if c := f.ct(t, ownedVMID).Config["rootfs"]; !strings.Contains(c, "size=8G") {
					t.Errorf("rootfs = %q, want 8G", c)
				}
			}},
		},
		"ShrinkRefused": {
			reason: "A smaller volume is refused with a message naming it, never shrunk.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				return owned(t, f, newContainer("shrink", fromOSTemplate), true, map[string]string{"rootfs": "local-lvm:16"})
			},
			want: verbWant{err: guest.ErrChangeRefused, noEvents: []string{"Resized"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.Container) {
				if c := f.ct(t, ownedVMID).Config["rootfs"]; !strings.Contains(c, "size=16G") {
					t.Errorf("rootfs = %q, want it left at 16G", c)
				}
			}},
		},
		"AddMountPoint": {
			reason: "A new mount point is allocated by the configuration change.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				cr := newContainer("mount", fromOSTemplate)
				cr.Spec.Template.Disk = append(cr.Spec.Template.Disk, v1alpha1.ContainerDisk{Storage: "local-lvm", Size: 3, Path: "/srv/data"})
				cr.Generation = 2
				return owned(t, f, cr, false, nil)
			},
			want: verbWant{events: []string{"Configured"}, noEvents: []string{"DriftCorrected"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.Container) {
				if c := f.ct(t, ownedVMID).Config["mp0"]; !strings.Contains(c, "mp=/srv/data") || !strings.Contains(c, "size=3G") {
					t.Errorf("mp0 = %q, want a 3G volume at /srv/data", c)
				}
			}},
		},
		"StartStopped": {
			reason: "A converged container found stopped is started.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				return owned(t, f, newContainer("start", fromOSTemplate), false, nil)
			},
			want: verbWant{events: []string{"Started"}, pve: func(t *testing.T, _ *fixture, cr *v1alpha1.Container) {
				if cr.Status.LastTask == nil || cr.Status.LastTask.Type != "vzstart" {
					t.Errorf("last task %+v, want vzstart", cr.Status.LastTask)
				}
			}},
		},
		"PowerStateStopped": {
			reason: "powerState Stopped shuts a running container down gracefully, with the spec's timeout.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				cr := newContainer("stopme", fromOSTemplate)
				cr.Spec.PowerState, cr.Spec.ShutdownTimeoutSeconds = v1alpha1.PowerStateStopped, ptr.To[int32](30)
				return owned(t, f, cr, true, nil)
			},
			want: verbWant{events: []string{"ShuttingDown"}, noEvents: []string{"Started"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.Container) {
				if cr.Status.LastTask == nil || cr.Status.LastTask.Type != "vzshutdown" {
					t.Errorf("last task %+v, want vzshutdown", cr.Status.LastTask)
				}
				if !f.log.Mentions("30 s to do so gracefully") {
					t.Error("the ShuttingDown event does not give the spec's timeout")
				}
			}},
		},
		"ReplaceOnNewOSTemplate": {
			reason: "A changed ostemplate replaces the container: a stopped one is destroyed, with an event.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				cr := owned(t, f, newContainer("replace", fromOSTemplate), false, nil)
				meta.AddAnnotations(cr, map[string]string{annotationSource: sourceOSTemplate + "local:vztmpl/alpine-3.21.tar.xz"})
				return cr
			},
			want: verbWant{events: []string{"Replacing", "Deleting"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.Container) {
				waitTask(t, f, cr.Status.LastTask.UPID)
				if _, ok := f.sim.Guest(ownedVMID); ok {
					t.Error("the old container is still there")
				}
			}},
		},
		"ReplaceBlockedByProtection": {
			reason: "deletionProtection blocks a replacement, and the error says what is blocked.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				cr := newContainer("blocked", fromImage)
				cr.Spec.DeletionProtection = true
				cr = owned(t, f, cr, true, nil)
				meta.AddAnnotations(cr, map[string]string{annotationSource: sourceImage + "docker.io/library/nginx:1.25"})
				return cr
			},
			want: verbWant{err: ErrReplaceProtected, noEvents: []string{"Replacing"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.Container) {
				if g := f.ct(t, ownedVMID); g.Status != "running" {
					t.Errorf("the protected container is %s, want it left running", g.Status)
				}
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			cr := tc.setup(t, f)
			e, _ := observed(t, f, cr)
			_, err := e.Update(context.Background(), cr)
			tc.want.check(t, tc.reason, f, cr, err)
		})
	}
}
