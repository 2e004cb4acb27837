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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

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
	guesttest.Seed(t, f.sim, pvesim.GuestSeed{Kind: "lxc", Node: testNode, VMID: ownedVMID, Config: base, Running: running}, cfg)
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
