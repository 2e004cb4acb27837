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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// ownedVMID is where the verb tables seed the resource's container.
const ownedVMID = 710

// verbWant is what one verb must leave behind.
type verbWant struct {
	// err is our own error the verb returns, compared with errors.Is; nil
	// (with pveText "") means no error.
	err error
	// pveText is part of Proxmox VE's own message the error must carry.
	pveText string
	// events must all be recorded; noEvents must not.
	events, noEvents []string
	// ready is the Ready condition's status ("" = not checked).
	ready corev1.ConditionStatus
	// pve checks the simulator (and the resource) afterwards.
	pve func(t *testing.T, f *fixture, cr *v1alpha1.Container)
}

func (w verbWant) check(t *testing.T, reason string, f *fixture, cr *v1alpha1.Container, err error) {
	t.Helper()
	guesttest.Want{Reason: reason, Err: w.err, PVEText: w.pveText, Events: w.events, NoEvents: w.noEvents, Ready: w.ready}.Check(t, f.log, cr, err)
	if w.pve != nil {
		w.pve(t, f, cr)
	}
}

// owned stores cr as a resource we created, Ready and in sync, and seeds
// its container at ownedVMID matching hardware() and carrying its marker;
// cfg overrides the container's config ("" removes a key).
func owned(t *testing.T, f *fixture, cr *v1alpha1.Container, running bool, cfg map[string]string) *v1alpha1.Container {
	t.Helper()
	meta.SetExternalName(cr, strconv.Itoa(ownedVMID))
	meta.SetExternalCreateSucceeded(cr, time.Now())
	if src := cr.Spec.Source(); src != nil {
		meta.AddAnnotations(cr, map[string]string{annotationSource: sourceAnnotation(src)})
	}
	f.store(t, cr, false)
	cr.Status.VMID = ownedVMID
	cr.SetConditions(xpv2.Available().WithObservedGeneration(1), xpv2.ReconcileSuccess().WithObservedGeneration(1))
	base := map[string]string{
		"hostname": cr.Spec.Name, "cores": "2", "memory": "1024", "swap": "256", "rootfs": "local-lvm:8",
		"net0": "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:07:10,ip=dhcp,type=veth", "ostype": "debian",
		"unprivileged": "1", "description": guest.MarkerOf(cr).String(),
	}
	for k, v := range cfg {
		if v == "" {
			delete(base, k)
			continue
		}
		base[k] = v
	}
	if err := f.sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: testNode, VMID: ownedVMID, Config: base, Running: running}); err != nil {
		t.Fatalf("seed %d: %v", ownedVMID, err)
	}
	return cr
}

// observed runs Observe, failing the test on an error, as the reconciler
// does before Update and Delete.
func observed(t *testing.T, f *fixture, cr *v1alpha1.Container) (*external, bool) {
	t.Helper()
	e := f.external()
	obs, err := e.Observe(context.Background(), cr)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	return e, obs.ResourceUpToDate
}

// waitTask waits for the last task the resource recorded to end.
func waitTask(t *testing.T, f *fixture, upid string) pve.TaskStatus {
	t.Helper()
	var ts pve.TaskStatus
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		ts, err = f.cl.TaskStatus(ctx, upid)
		return err == nil && !ts.Running, err
	})
	if err != nil {
		t.Fatalf("task %s did not end: %v", upid, err)
	}
	return ts
}

func TestObserve(t *testing.T) {
	cases := map[string]struct {
		reason    string
		setup     func(t *testing.T, f *fixture) *v1alpha1.Container
		exists    bool
		upToDate  bool
		diff      string
		details   []string
		noDetails []string
		want      verbWant
	}{
		"NoVMIDYet": {
			reason: "A resource without an external name has nothing in PVE yet.",
			setup:  func(_ *testing.T, _ *fixture) *v1alpha1.Container { return newContainer("fresh", fromOSTemplate) },
		},
		"OwnedAndConverged": {
			reason: "Our running container matching the spec is up to date and Ready, with its connection details.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				return owned(t, f, newContainer("same", fromOSTemplate), true, nil)
			},
			exists: true, upToDate: true, details: []string{"vmid", "node", "ipAddress"}, noDetails: []string{"password"},
			want: verbWant{ready: corev1.ConditionTrue, pve: func(t *testing.T, _ *fixture, cr *v1alpha1.Container) {
				if cr.Status.Status.IPAddress == "" || cr.Status.Status.Node != testNode || cr.Status.Status.State != "running" {
					t.Errorf("status %+v: want running on %s with an address", cr.Status.Status, testNode)
				}
			}},
		},
		"Drift": {
			reason: "Cores, memory, swap and a NIC changed behind our back are drift to correct.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				return owned(t, f, newContainer("drift", fromOSTemplate), true, map[string]string{
					"cores": "4", "memory": "2048", "swap": "0", "net0": "name=eth0,bridge=vmbr9,hwaddr=BC:24:11:00:07:10,ip=dhcp,type=veth",
				})
			},
			exists: true, diff: "cores,memory,swap,net0",
		},
		"WrongGuestType": {
			reason: "A VM at a VMID the user named is an error, never managed or recreated as a container.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				if err := f.sim.AddGuest(pvesim.GuestSeed{Kind: "qemu", Node: testNode, VMID: ownedVMID, Config: map[string]string{"name": "a-vm"}}); err != nil {
					t.Fatal(err)
				}
				cr := newContainer("wrongtype", fromOSTemplate)
				meta.SetExternalName(cr, strconv.Itoa(ownedVMID))
				f.store(t, cr, false)
				return cr
			},
			want: verbWant{err: guest.ErrWrongGuestType},
		},
		"ImportObserveOnly": {
			reason: "An existing container named by the user is observed without a marker or any change.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				cr := &v1alpha1.Container{
					ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "imported", UID: "uid-imported", Generation: 1},
					Spec: v1alpha1.ContainerSpec{ResourceSpec: v1alpha1.ResourceSpec{
						ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}}},
				}
				meta.SetExternalName(cr, strconv.Itoa(ownedVMID))
				f.store(t, cr, false)
				if err := f.sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: testNode, VMID: ownedVMID, Running: true, Config: map[string]string{
					"hostname": "legacy", "rootfs": "local-lvm:2", "description": "someone's container"}}); err != nil {
					t.Fatal(err)
				}
				return cr
			},
			exists: true, upToDate: true,
			want: verbWant{ready: corev1.ConditionTrue, pve: func(t *testing.T, f *fixture, _ *v1alpha1.Container) {
				if d := f.ct(t, ownedVMID).Config["description"]; d != "someone's container" {
					t.Errorf("description = %q: an Observe-only import writes nothing", d)
				}
			}},
		},
		"SourceChanged": {
			reason: "A container created from another ostemplate than the spec names must be replaced.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				cr := owned(t, f, newContainer("newsrc", fromOSTemplate), false, nil)
				meta.AddAnnotations(cr, map[string]string{annotationSource: sourceOSTemplate + "local:vztmpl/alpine-3.21.tar.xz"})
				return cr
			},
			exists: true,
			want: verbWant{pve: func(t *testing.T, _ *fixture, cr *v1alpha1.Container) {
				if cr.Status.Source == nil || cr.Status.Source.OSTemplate != "local:vztmpl/alpine-3.21.tar.xz" {
					t.Errorf("status.source = %+v, want the recorded archive", cr.Status.Source)
				}
			}},
		},
		"DeletedWhileProtected": {
			reason: "A protected resource being deleted lets go of its container, which stays.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.Container {
				cr := newContainer("kept", fromOSTemplate)
				cr.Spec.DeletionProtection = true
				cr = owned(t, f, cr, true, nil)
				now := metav1.Now()
				cr.SetDeletionTimestamp(&now)
				return cr
			},
			want: verbWant{events: []string{"DeletionProtection"}, pve: func(t *testing.T, f *fixture, _ *v1alpha1.Container) {
				f.ct(t, ownedVMID)
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			cr := tc.setup(t, f)
			obs, err := f.external().Observe(context.Background(), cr)
			type result struct {
				Exists, UpToDate bool
				Diff             string
			}
			want := result{Exists: tc.exists, UpToDate: tc.upToDate, Diff: tc.diff}
			got := result{Exists: obs.ResourceExists, UpToDate: obs.ResourceExists && obs.ResourceUpToDate, Diff: obs.Diff}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nObserve(...): -want, +got:\n%s", tc.reason, diff)
			}
			for _, k := range tc.details {
				if len(obs.ConnectionDetails[k]) == 0 {
					t.Errorf("%s\nno connection detail %q", tc.reason, k)
				}
			}
			for _, k := range tc.noDetails {
				if _, ok := obs.ConnectionDetails[k]; ok {
					t.Errorf("%s\nunexpected connection detail %q", tc.reason, k)
				}
			}
			tc.want.check(t, tc.reason, f, cr, err)
		})
	}
}

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

func TestDelete(t *testing.T) {
	cases := map[string]struct {
		reason  string
		running bool
		want    verbWant
	}{
		"RunningShutsDown": {
			reason:  "A running container is shut down first.",
			running: true,
			want: verbWant{events: []string{"ShuttingDown"}, pve: func(t *testing.T, _ *fixture, cr *v1alpha1.Container) {
				if cr.Status.LastTask == nil || cr.Status.LastTask.Type != "vzshutdown" {
					t.Errorf("last task %+v, want vzshutdown", cr.Status.LastTask)
				}
			}},
		},
		"StoppedDestroyed": {
			reason: "A stopped container is destroyed with purge.",
			want: verbWant{events: []string{"Deleting"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.Container) {
				waitTask(t, f, cr.Status.LastTask.UPID)
				if _, ok := f.sim.Guest(ownedVMID); ok {
					t.Error("the container is still there")
				}
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			cr := owned(t, f, newContainer("gone", fromOSTemplate), tc.running, nil)
			now := metav1.Now()
			cr.SetDeletionTimestamp(&now)
			e, _ := observed(t, f, cr)
			_, err := e.Delete(context.Background(), cr)
			tc.want.check(t, tc.reason, f, cr, err)
		})
	}
}

// A change PVE leaves pending on a running container (features) is applied
// by one restart, after which nothing is pending.
func TestPendingChangeAppliedByOneRestart(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := newContainer("pending", fromOSTemplate)
	cr.Spec.Template.Features = &v1alpha1.ContainerFeatures{Nesting: true, Keyctl: true}
	cr.Generation = 2
	cr = owned(t, f, cr, true, nil)
	f.converge(t, cr, 20)
	if !f.log.Has("Rebooted") {
		t.Errorf("no Rebooted event: %v", f.log.Reasons())
	}
	g := f.ct(t, ownedVMID)
	if g.Config["features"] != "nesting=1,keyctl=1" || len(g.Pending) > 0 || g.Status != "running" {
		t.Errorf("features %q pending %v status %s: want applied by the restart", g.Config["features"], g.Pending, g.Status)
	}
}

// A replacement ends with a new container from the new source at the same
// VMID.
func TestReplacementCreatesFromTheNewSource(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := owned(t, f, newContainer("swap", fromOSTemplate), true, nil)
	meta.AddAnnotations(cr, map[string]string{annotationSource: sourceOSTemplate + "local:vztmpl/alpine-3.21.tar.xz"})
	f.converge(t, cr, 40)
	if guesttest.VMIDOf(t, cr) != ownedVMID || cr.Status.Source == nil || cr.Status.Source.OSTemplate != debianVolume {
		t.Errorf("VMID %d source %+v: want %d from %s", guesttest.VMIDOf(t, cr), cr.Status.Source, ownedVMID, debianVolume)
	}
	if !f.log.Has("Replacing") || !f.log.Has("Creating") {
		t.Errorf("events %v: want Replacing then Creating", f.log.Reasons())
	}
}

// A new image reference that pulls to the same file name replaces the
// container: the old file is removed first (PVE refuses to overwrite it),
// the new image pulled, and the container created from it.
func TestImageReplacedUnderTheSameFileName(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	const old = "ghcr.io/example/nginx:1.27"
	if err := f.sim.AddVolume(testNode, pve.OCIImageVolID("local", old)); err != nil {
		t.Fatal(err)
	}
	cr := owned(t, f, newContainer("reimage", fromImage), true, nil)
	meta.AddAnnotations(cr, map[string]string{annotationSource: sourceImage + old, annotationPulled: old})
	f.converge(t, cr, 60)
	for _, r := range []string{"Replacing", "RemovingImageFile", "PullingImage", "ImagePulled", "Creating"} {
		if !f.log.Has(r) {
			t.Errorf("no %s event; events %v", r, f.log.Reasons())
		}
	}
	if cr.Status.Source == nil || cr.Status.Source.ImageReference != nginxImage || guesttest.VMIDOf(t, cr) != ownedVMID {
		t.Errorf("source %+v at VMID %d, want %s at %d", cr.Status.Source, guesttest.VMIDOf(t, cr), nginxImage, ownedVMID)
	}
}

func TestReplacement(t *testing.T) {
	cases := map[string]struct {
		reason           string
		recorded, wanted *v1alpha1.ContainerSource
		want             string
	}{
		"Unknown":    {reason: "A clone or import records no source: never replaced.", wanted: &v1alpha1.ContainerSource{OSTemplate: "a"}},
		"NoSource":   {reason: "A spec without an archive or image asks for no replacement.", recorded: &v1alpha1.ContainerSource{OSTemplate: "a"}},
		"Same":       {reason: "The same source needs nothing.", recorded: &v1alpha1.ContainerSource{OSTemplate: "a"}, wanted: &v1alpha1.ContainerSource{OSTemplate: "a"}},
		"OSTemplate": {reason: "A new archive is named.", recorded: &v1alpha1.ContainerSource{OSTemplate: "a"}, wanted: &v1alpha1.ContainerSource{OSTemplate: "b"}, want: "template.ostemplate changed from a to b"},
		"Image":      {reason: "A new image reference is named.", recorded: &v1alpha1.ContainerSource{ImageReference: "x:1"}, wanted: &v1alpha1.ContainerSource{ImageReference: "x:2"}, want: "template.image.reference changed from x:1 to x:2"},
		"Kind":       {reason: "A switch between archive and image says both.", recorded: &v1alpha1.ContainerSource{OSTemplate: "a"}, wanted: &v1alpha1.ContainerSource{ImageReference: "x:2"}, want: "the source changed from ostemplate a to image x:2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := replacement(tc.recorded, tc.wanted); got != tc.want {
				t.Errorf("%s\nreplacement() = %q, want %q", tc.reason, got, tc.want)
			}
			if tc.recorded != nil {
				back := recordedSource(map[string]string{annotationSource: sourceAnnotation(tc.recorded)})
				if back == nil || *back != *tc.recorded {
					t.Errorf("%s\nthe annotation round trip gave %+v, want %+v", tc.reason, back, tc.recorded)
				}
			}
		})
	}
}

// A container kept Stopped converges stopped: its configuration is
// corrected without a start, and it is Ready.
func TestPowerStateStoppedConverges(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := newContainer("kept-stopped", fromOSTemplate)
	cr.Spec.PowerState = v1alpha1.PowerStateStopped
	cr = owned(t, f, cr, true, map[string]string{"cores": "4"})
	f.converge(t, cr, 20)
	g := f.ct(t, ownedVMID)
	if g.Status != "stopped" || g.Config["cores"] != "2" {
		t.Errorf("status %s cores %s: want stopped with cores 2", g.Status, g.Config["cores"])
	}
	if f.log.Has("Started") || f.log.Has("Rebooted") {
		t.Errorf("a container kept stopped was started: %v", f.log.Reasons())
	}
}
