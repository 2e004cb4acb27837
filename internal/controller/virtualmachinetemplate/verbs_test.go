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

package virtualmachinetemplate

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func TestObserve(t *testing.T) {
	cases := map[string]struct {
		reason string
		opts   pvesim.Options
		setup  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate
		want   observation
		events []string
		check  func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachineTemplate)
	}{
		"NothingYet": {
			reason: "No image and no VMID: Create makes the image.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				return f.stored(t, newTemplate("fresh"))
			},
			want: observation{Step: "Image", Ready: corev1.ConditionFalse},
		},
		"ImageDownloading": {
			reason: "While the image downloads nothing is to be created: reported present so it is polled, not re-created.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				cr := f.stored(t, newTemplate("downloading"))
				if err := f.external().createImage(context.Background(), cr); err != nil {
					t.Fatal(err)
				}
				return cr
			},
			want: observation{Exists: true, Step: "Image", Ready: corev1.ConditionFalse},
		},
		"ImageReady": {
			reason: "Once the image is there, Create makes the VM.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				cr := f.stored(t, newTemplate("imageready"))
				f.imageReady(t, cr)
				return cr
			},
			want: observation{Step: "Image", Ready: corev1.ConditionFalse},
		},
		"VMNotConvertedYet": {
			reason: "Our VM that is not a template yet: Create converts it.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				return f.ours(t, f.stored(t, newTemplate("half")), false, false)
			},
			want: observation{Step: "Template", Ready: corev1.ConditionFalse},
		},
		"Built": {
			reason: "Our template: Ready, up to date, with connection details.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				return f.ours(t, f.stored(t, newTemplate("built")), true, false)
			},
			want: observation{Exists: true, Step: "Done", Ready: corev1.ConditionTrue},
			check: func(t *testing.T, _ *fixture, cr *v1alpha1.VirtualMachineTemplate) {
				if c := cr.GetCondition(TypeTemplateUpToDate); c.Status != corev1.ConditionTrue || cr.Status.VMID != seedVMID || cr.Status.BuiltFrom == "" {
					t.Errorf("TemplateUpToDate %s, vmid %d, builtFrom %q", c.Status, cr.Status.VMID, cr.Status.BuiltFrom)
				}
			},
		},
		"SpecChangedAfterTheBuild": {
			reason: "A change after the build is a condition and an event, never applied.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				cr := f.ours(t, f.stored(t, newTemplate("changed")), true, false)
				if _, err := f.external().Observe(context.Background(), cr); err != nil {
					t.Fatal(err)
				}
				cr.Spec.VirtualMachineConfig.Cores = 16
				return cr
			},
			want:   observation{Exists: true, Step: "Done", Ready: corev1.ConditionTrue},
			events: []string{string(ReasonTemplateImmutable)},
			check: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachineTemplate) {
				if c := cr.GetCondition(TypeTemplateUpToDate); c.Reason != ReasonSpecChanged {
					t.Errorf("TemplateUpToDate reason %q, want %q", c.Reason, ReasonSpecChanged)
				}
				if g, _ := f.sim.Guest(seedVMID); g.Config["cores"] == "16" {
					t.Error("the template was changed")
				}
			},
		},
		"VMIDTakenBySomeoneElse": {
			reason: "A VM without our marker at the VMID we picked: the VMID is given up and another picked.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				cr := f.stored(t, newTemplate("lost"))
				meta.SetExternalName(cr, strconv.Itoa(seedVMID))
				if err := f.kube.Update(context.Background(), cr); err != nil {
					t.Fatal(err)
				}
				if err := f.sim.AddGuest(pvesim.GuestSeed{Node: testNode, VMID: seedVMID, Config: map[string]string{"name": "someone-else"}}); err != nil {
					t.Fatal(err)
				}
				return cr
			},
			want:   observation{Ready: corev1.ConditionUnknown},
			events: []string{string(guest.ReasonVMIDTaken)},
			check: func(t *testing.T, _ *fixture, cr *v1alpha1.VirtualMachineTemplate) {
				if meta.GetExternalName(cr) != "" {
					t.Errorf("external name %q, want the VMID given up", meta.GetExternalName(cr))
				}
			},
		},
		"DeletingProtected": {
			reason: "With deletionProtection a deleted resource is reported gone and the template kept.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				cr := f.ours(t, f.stored(t, newTemplate("keep")), true, false)
				cr.Spec.DeletionProtection = true
				now := metav1.Now()
				cr.SetDeletionTimestamp(&now)
				return cr
			},
			want:   observation{Ready: corev1.ConditionUnknown},
			events: []string{string(guest.ReasonDeletionProtection)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.opts)
			cr := tc.setup(t, f)
			o, err := f.external().Observe(context.Background(), cr)
			if err != nil {
				t.Fatalf("%s\nObserve: %v", tc.reason, err)
			}
			got := observation{Exists: o.ResourceExists, Step: cr.Status.Step, Ready: cr.GetCondition(xpv2.TypeReady).Status}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nObserve (-want +got):\n%s", tc.reason, diff)
			}
			for _, r := range tc.events {
				if !f.log.Has(r) {
					t.Errorf("%s\nno %s event; events %v", tc.reason, r, f.log.Reasons())
				}
			}
			if f.log.Mentions("pw-canary") {
				t.Errorf("%s\nan event carries the cloud-init password", tc.reason)
			}
			if tc.check != nil {
				tc.check(t, f, cr)
			}
		})
	}
}

// createCase is one Create case: the resource as setup leaves it, the
// error or events wanted, and what else to check.
type createCase struct {
	reason string
	setup  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate
	err    string
	events []string
	check  func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachineTemplate)
}

// importedFromPath is the case of a template (from template) whose 2G
// image is there as iso content, as root@pam: the VM's disk is imported
// from the volume's file path, which an event names.
func importedFromPath(reason string, template func(*testing.T, *fixture) *v1alpha1.VirtualMachineTemplate, path string) createCase {
	return createCase{
		reason: reason,
		setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
			cr := template(t, f)
			f.cl = guesttest.RootClient(t, f.sim)
			cr = f.stored(t, cr)
			f.imageReady(t, cr)
			return cr
		},
		events: []string{string(guest.ReasonCreating)},
		check: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachineTemplate) {
			vmid, _ := strconv.Atoi(meta.GetExternalName(cr))
			g, _ := f.sim.Guest(vmid)
			if !strings.Contains(g.Config["scsi0"], "size=2G") {
				t.Errorf("scsi0 %q: want the 2G image imported from %s", g.Config["scsi0"], path)
			}
			if !f.log.Mentions(path) {
				t.Errorf("no event names the path imported from (%s); events %v", path, f.log.Reasons())
			}
		},
	}
}

func TestCreate(t *testing.T) {
	cases := map[string]createCase{
		"MakesTheImage": {
			reason: "The first step makes the StorageDownloadURL, owned by the template.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				return f.stored(t, newTemplate("img"))
			},
			check: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachineTemplate) {
				sdu := f.image(t, "img-image")
				if !metav1.IsControlledBy(sdu, cr) || sdu.Spec.VolID() != imageVol || meta.GetExternalName(cr) != "" {
					t.Errorf("image %s owners %v; external name %q: want the owned image and no VMID yet", sdu.Spec.VolID(), sdu.OwnerReferences, meta.GetExternalName(cr))
				}
			},
		},
		"ISOConverted": {
			reason: "An iso imageConfig is downloaded as import (.img becomes .qcow2), with an event.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				cr := newTemplate("iso")
				cr.Spec.ImageConfig.Content, cr.Spec.ImageConfig.Filename = "iso", "noble.img"
				return f.stored(t, cr)
			},
			events: []string{string(ReasonImageConverted)},
			check: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachineTemplate) {
				sdu := f.image(t, "iso-image")
				if sdu.Spec.VolID() != "local:import/noble.qcow2" {
					t.Errorf("image %s, want local:import/noble.qcow2", sdu.Spec.VolID())
				}
			},
		},
		"NoImportContentWithAToken": {
			reason: "A storage without import content and a token (which may not import a path): an error saying what is needed, and no download.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				f.withoutImportContent(t)
				return f.stored(t, newTemplate("token"))
			},
			err: "storage local on node lowtower has no import content (it holds: iso,vztmpl,backup)",
			check: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachineTemplate) {
				err := f.kube.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "token-image"}, &v1alpha1.StorageDownloadURL{})
				if !kerrors.IsNotFound(err) {
					t.Errorf("StorageDownloadURL lookup: %v, want none made", err)
				}
			},
		},
		"NoImportContentAsRoot": {
			reason: "A storage without import content, as root@pam: the image is downloaded as iso content (named .img), with an event.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				f.withoutImportContent(t)
				f.cl = guesttest.RootClient(t, f.sim)
				return f.stored(t, newTemplate("root"))
			},
			events: []string{string(ReasonImageFromPath)},
			check: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachineTemplate) {
				sdu := f.image(t, "root-image")
				if sdu.Spec.VolID() != "local:iso/debian-12.img" {
					t.Errorf("image %s, want local:iso/debian-12.img", sdu.Spec.VolID())
				}
			},
		},
		"CreatesTheVMFromThePathAsRoot": importedFromPath(
			"With the iso image there (the root@pam fallback), the disk is imported from the volume's file path.",
			func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				f.withoutImportContent(t)
				return newTemplate("rootvm")
			}, "/var/lib/vz/template/iso/debian-12.img"),
		"TalosISOAsRoot": {
			reason: "An iso imageConfig named .iso (a disk image, as Talos ships): import content refuses the name (pve-storage's $UPLOAD_IMPORT_EXT_RE_1), so it stays iso content, with an event, as root@pam.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				f.cl = guesttest.RootClient(t, f.sim)
				return f.stored(t, talosTemplate("talos"))
			},
			events: []string{string(ReasonImageFromPath)},
			check: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachineTemplate) {
				sdu := f.image(t, "talos-image")
				if sdu.Spec.VolID() != "local:iso/talos-amd64.iso" {
					t.Errorf("image %s, want local:iso/talos-amd64.iso", sdu.Spec.VolID())
				}
			},
		},
		"TalosISOWithAToken": {
			reason: "The same with a token, which may not import a path: an error saying what is needed, and no download.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				return f.stored(t, talosTemplate("talostoken"))
			},
			err: "imports a disk from an iso volume only by its file path, which it allows root@pam alone",
			check: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachineTemplate) {
				err := f.kube.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "talostoken-image"}, &v1alpha1.StorageDownloadURL{})
				if !kerrors.IsNotFound(err) {
					t.Errorf("StorageDownloadURL lookup: %v, want none made", err)
				}
			},
		},
		"CompressedISOStaysISO": {
			reason: "A compressed iso download is decompressed by Proxmox VE only as iso content, so it stays iso (as root@pam).",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				f.cl = guesttest.RootClient(t, f.sim)
				cr := newTemplate("zst")
				cr.Spec.ImageConfig.Content, cr.Spec.ImageConfig.Filename, cr.Spec.ImageConfig.Compression = "iso", "disk.img", "zst"
				return f.stored(t, cr)
			},
			events: []string{string(ReasonImageFromPath)},
			check: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachineTemplate) {
				sdu := f.image(t, "zst-image")
				if sdu.Spec.VolID() != "local:iso/disk.img" || sdu.Spec.Compression != "zst" {
					t.Errorf("image %s compression %q, want local:iso/disk.img, zst", sdu.Spec.VolID(), sdu.Spec.Compression)
				}
			},
		},
		"ISONamedNeitherWay": {
			reason: "An iso imageConfig whose name neither iso nor import content takes (.bin) is downloaded as iso named .img, imported from its path (root@pam).",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				f.cl = guesttest.RootClient(t, f.sim)
				cr := newTemplate("bin")
				cr.Spec.ImageConfig.Content, cr.Spec.ImageConfig.Filename = "iso", "disk.bin"
				return f.stored(t, cr)
			},
			events: []string{string(ReasonImageFromPath)},
			check: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachineTemplate) {
				if sdu := f.image(t, "bin-image"); sdu.Spec.VolID() != "local:iso/disk.bin.img" {
					t.Errorf("image %s, want local:iso/disk.bin.img", sdu.Spec.VolID())
				}
			},
		},
		"ISONamedRawConverted": {
			reason: "An iso imageConfig whose name import content takes (.raw) is downloaded as import, unchanged.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				cr := newTemplate("raw")
				cr.Spec.ImageConfig.Content, cr.Spec.ImageConfig.Filename = "iso", "disk.raw"
				return f.stored(t, cr)
			},
			events: []string{string(ReasonImageConverted)},
			check: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachineTemplate) {
				sdu := f.image(t, "raw-image")
				if sdu.Spec.VolID() != "local:import/disk.raw" {
					t.Errorf("image %s, want local:import/disk.raw", sdu.Spec.VolID())
				}
			},
		},
		"CreatesTheVMFromTheTalosISO": importedFromPath(
			"With the .iso image there, the disk is imported from the volume's file path (root@pam).",
			func(*testing.T, *fixture) *v1alpha1.VirtualMachineTemplate { return talosTemplate("talosvm") },
			"/var/lib/vz/template/iso/talos-amd64.iso"),
		"MissingSnippetRefused": {
			reason: "cloudInitConfig.custom naming a snippet not on the node: refused, naming kubemox's volume, before the image is made.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				cr := newTemplate("nosnippet")
				cr.Spec.CloudInitConfig.Custom = &v1alpha1.CloudInitCustom{UserData: "talos.yaml"}
				return f.stored(t, cr)
			},
			err: `volume "local:snippets/talos.yaml" does not exist on node "lowtower"`,
		},
		"SnippetWritten": {
			reason: "cloudInitConfig.custom.userData is written as kubemox does: user=local:snippets/<name>.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				if err := f.sim.AddVolume(testNode, "local:snippets/talos.yaml"); err != nil {
					t.Fatal(err)
				}
				cr := newTemplate("snippet")
				cr.Spec.CloudInitConfig.Custom = &v1alpha1.CloudInitCustom{UserData: "talos.yaml"}
				cr = f.stored(t, cr)
				f.imageReady(t, cr)
				return cr
			},
			events: []string{string(guest.ReasonCreating)},
			check: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachineTemplate) {
				vmid, _ := strconv.Atoi(meta.GetExternalName(cr))
				if g, _ := f.sim.Guest(vmid); g.Config["cicustom"] != "user=local:snippets/talos.yaml" {
					t.Errorf("cicustom %q, want user=local:snippets/talos.yaml", g.Config["cicustom"])
				}
			},
		},
		"CreatesTheVM": {
			reason: "With the image there: the VMID is stored first, then one qmcreate imports the disk with the cloud-init drive, keys and boot order.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				cr := f.stored(t, newTemplate("vm"))
				f.imageReady(t, cr)
				return cr
			},
			events: []string{string(guest.ReasonCreating)},
			check: func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachineTemplate) {
				stored := &v1alpha1.VirtualMachineTemplate{}
				if err := f.kube.Get(context.Background(), client.ObjectKeyFromObject(cr), stored); err != nil || meta.GetExternalName(stored) == "" {
					t.Fatalf("the VMID was not stored before the create: %v", err)
				}
				vmid, _ := strconv.Atoi(meta.GetExternalName(cr))
				g, ok := f.sim.Guest(vmid)
				if !ok {
					t.Fatal("no VM")
				}
				got := map[string]string{"boot": g.Config["boot"], "ciuser": g.Config["ciuser"], "cores": g.Config["cores"], "template": g.Config["template"]}
				want := map[string]string{"boot": "order=scsi0", "ciuser": "debian", "cores": "2", "template": ""}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("config (-want +got):\n%s", diff)
				}
				if !strings.Contains(g.Config["scsi0"], "size=2G") || !strings.Contains(g.Config["ide2"], "cloudinit") {
					t.Errorf("scsi0 %q ide2 %q: want the 2G image imported and a cloud-init drive", g.Config["scsi0"], g.Config["ide2"])
				}
			},
		},
		"ConvertsTheVM": {
			reason: "Our stopped VM is converted to a template.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				cr := f.stored(t, newTemplate("convert"))
				f.imageReady(t, cr)
				return f.ours(t, cr, false, false)
			},
			events: []string{string(ReasonConverting)},
			check: func(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachineTemplate) {
				if g, _ := f.sim.Guest(seedVMID); !g.Template {
					t.Error("not converted")
				}
			},
		},
		"RunningVMRefused": {
			reason: "PVE refuses to convert a running VM: its message is returned.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineTemplate {
				cr := f.stored(t, newTemplate("running"))
				f.imageReady(t, cr)
				return f.ours(t, cr, false, true)
			},
			err: "you can't convert a VM to template if VM is running",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			cr := tc.setup(t, f)
			_, err := f.external().Create(context.Background(), cr)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("%s\nCreate: %v", tc.reason, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("%s\nCreate error %v, want one containing %q", tc.reason, err, tc.err)
			}
			for _, r := range tc.events {
				if !f.log.Has(r) {
					t.Errorf("%s\nno %s event; events %v", tc.reason, r, f.log.Reasons())
				}
			}
			if f.log.Mentions("pw-canary") {
				t.Errorf("%s\nan event carries the cloud-init password", tc.reason)
			}
			if tc.check != nil {
				tc.check(t, f, cr)
			}
		})
	}
}

func TestDeleteRefusedWhileALinkedCloneUsesTheTemplate(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := f.ours(t, f.stored(t, newTemplate("linked")), true, false)
	if _, err := f.cl.CloneGuest(context.Background(), pve.GuestRef{Type: pve.QEMU, Node: testNode, VMID: seedVMID},
		pve.CloneOptions{NewID: 701, Name: "clone", Full: false}); err != nil {
		t.Fatal(err)
	}
	e := f.external()
	if _, err := e.Delete(context.Background(), cr); err != nil {
		t.Fatalf("first Delete: %v", err)
	}
	if _, err := f.external().Observe(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	_, err := f.external().Delete(context.Background(), cr)
	if err == nil || !strings.Contains(err.Error(), "still in use by linked clone") {
		t.Fatalf("second Delete: %v, want PVE's refusal", err)
	}
	if _, ok := f.sim.Guest(seedVMID); !ok {
		t.Fatal("the template was destroyed")
	}
	if _, err := f.cl.DeleteGuest(context.Background(), pve.GuestRef{Type: pve.QEMU, Node: testNode, VMID: 701}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.external().Delete(context.Background(), cr); err != nil {
		t.Fatalf("Delete once unused: %v", err)
	}
	if _, ok := f.sim.Guest(seedVMID); ok {
		t.Error("the template survived")
	}
}

// TestReappliedTemplateAdoptsItsTemplate applies a template again (a new
// UID, no external name) over the template its predecessor built in this
// management cluster: Observe adopts it, and nothing is built again.
func TestReappliedTemplateAdoptsItsTemplate(t *testing.T) {
	cases := map[string]struct {
		reason   string
		template bool
		want     observation
	}{
		"Built": {reason: "A finished template marked by the resource is adopted, built.", template: true,
			want: observation{Exists: true, Step: v1alpha1.TemplateStepDone, Ready: corev1.ConditionTrue}},
		"HalfBuilt": {reason: "A VM marked by the resource and not converted yet (the build interrupted) is adopted; Create converts it next.",
			want: observation{Exists: false, Step: v1alpha1.TemplateStepTemplate, Ready: corev1.ConditionFalse}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr, obs := reapplyOver(t, tc.template)
			got := observation{Exists: obs.ResourceExists, Step: cr.Status.Step, Ready: cr.GetCondition(xpv2.TypeReady).Status}
			if diff := cmp.Diff(tc.want, got); diff != "" || meta.GetExternalName(cr) != strconv.Itoa(seedVMID) {
				t.Errorf("%s\nexternal name %q, observation -want +got:\n%s", tc.reason, meta.GetExternalName(cr), diff)
			}
		})
	}
}

// reapplyOver seeds a VM (a template or not) marked by a template resource
// of cluster-a, then observes a new object of that resource (another UID)
// and checks it adopted the VM, recording the adoption, with reads only.
func reapplyOver(t *testing.T, template bool) (*v1alpha1.VirtualMachineTemplate, managed.ExternalObservation) {
	t.Helper()
	f := newFixture(t, pvesim.Options{})
	id := guest.Identity{Kube: f.kube, Client: f.cl, Connection: "default", VMIDs: pve.NewVMIDAllocator(0), Record: f.log, Type: pve.QEMU, Noun: "VM", Kind: v1alpha1.VirtualMachineTemplateKind, Cluster: "cluster-a"}
	old := newTemplate("debian-12")
	if err := f.sim.AddGuest(pvesim.GuestSeed{Node: testNode, VMID: seedVMID, Template: template, Config: map[string]string{
		"name": old.Spec.Name, "scsi0": "local-lvm:8", "description": guest.WithMarker("", id.MarkerOf(old)),
	}}); err != nil {
		t.Fatal(err)
	}
	cr := newTemplate("debian-12")
	cr.UID = "uid-applied-again"
	cr = f.stored(t, cr)
	f.sim.ResetCounters()
	obs, err := newExternal(f.kube, f.kube, f.cl, id, f.log).Observe(context.Background(), cr)
	if err != nil {
		t.Fatal(err)
	}
	if a := cr.Status.Adoption; a == nil || a.VMID != seedVMID || a.FromCluster != "cluster-a" || a.PreviousUID != string(old.UID) {
		t.Errorf("status.adoption %+v", a)
	}
	for _, r := range f.sim.RequestLog() {
		if r.Method != http.MethodGet {
			t.Errorf("adopting sent %s %s", r.Method, r.Path)
		}
	}
	return cr, obs
}
