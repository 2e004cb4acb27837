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

package virtualmachine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// scratchWithCloudInit is a scratch VM whose vmSpec.cloudInitConfig is ci.
func scratchWithCloudInit(name string, ci *v1alpha1.CloudInitConfig) *v1alpha1.VirtualMachine {
	cr := scratchVM(name)
	cr.Spec.VMSpec.CloudInitConfig = ci
	return cr
}

// TestCustomSnippetIsKubemoxsVolume checks that custom.userData names the
// volume kubemox names (user=local:snippets/<name>; PVE's cicustom takes
// volume IDs, pve-volume-id in qemu-server's $cicustom_fmt), and that a
// value already a volume ID is kept.
func TestCustomSnippetIsKubemoxsVolume(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	for _, vol := range []string{"local:snippets/user.yaml", "local:snippets/vendor.yaml"} {
		if err := f.sim.AddVolume(testNode, vol); err != nil {
			t.Fatal(err)
		}
	}
	cr := scratchWithCloudInit("snippets", &v1alpha1.CloudInitConfig{User: "ops",
		Custom: &v1alpha1.CloudInitCustom{UserData: "user.yaml", VendorData: "local:snippets/vendor.yaml"}})
	f.store(t, cr, true)
	f.converge(t, cr, 20)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	g, _ := f.sim.Guest(vmid)
	if got, want := g.Config["cicustom"], "user=local:snippets/user.yaml,vendor=local:snippets/vendor.yaml"; got != want {
		t.Errorf("cicustom: got %q, want %q", got, want)
	}
}

// TestMissingSnippetRefusedBeforeCreate checks that a snippet that is not
// on the node is named before anything is created: PVE stores any volume
// ID in cicustom and fails only when the first start builds the drive.
func TestMissingSnippetRefusedBeforeCreate(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := pending(t, f, scratchWithCloudInit("nosnippet", &v1alpha1.CloudInitConfig{Custom: &v1alpha1.CloudInitCustom{UserData: "missing.yaml"}}))
	_, err := f.external().Create(context.Background(), cr)
	if diff := cmp.Diff(pve.ErrMissingPrerequisite, err, cmpopts.EquateErrors()); diff != "" {
		t.Fatalf("Create: -want, +got:\n%s", diff)
	}
	nothingPicked(t, f, cr)
}

// TestMissingSnippetRefusedBeforeUpdate checks that a changed
// custom.userData naming a missing snippet is refused before the config
// write, and the guest keeps its cicustom.
func TestMissingSnippetRefusedBeforeUpdate(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	if err := f.sim.AddVolume(testNode, "local:snippets/user.yaml"); err != nil {
		t.Fatal(err)
	}
	cr := scratchWithCloudInit("changesnippet", &v1alpha1.CloudInitConfig{Custom: &v1alpha1.CloudInitCustom{UserData: "user.yaml"}})
	f.store(t, cr, true)
	f.converge(t, cr, 20)
	cr.Spec.VMSpec.CloudInitConfig.Custom.UserData = "gone.yaml"
	e := f.external()
	if _, err := e.Observe(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	_, err := e.Update(context.Background(), cr)
	if diff := cmp.Diff(pve.ErrMissingPrerequisite, err, cmpopts.EquateErrors()); diff != "" {
		t.Fatalf("Update: -want, +got:\n%s", diff)
	}
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	if g, _ := f.sim.Guest(vmid); g.Config["cicustom"] != "user=local:snippets/user.yaml" {
		t.Errorf("cicustom changed to %q", g.Config["cicustom"])
	}
}

// TestKubemoxSnippetGuestAdoptedUnchanged is what kubemox-migrate leaves:
// a guest kubemox configured (cicustom user=local:snippets/<name>) and a
// VirtualMachine with kubemox's spec. Managing it writes the marker and
// nothing else.
func TestKubemoxSnippetGuestAdoptedUnchanged(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	if err := f.sim.AddVolume(testNode, "local:snippets/user.yaml"); err != nil {
		t.Fatal(err)
	}
	seed(t, f, 620, map[string]string{"name": "kubemoxed", "ciuser": "ops", "ciupgrade": "1",
		"cicustom": "user=local:snippets/user.yaml", "ide2": "local-lvm:vm-620-cloudinit,media=cdrom"})
	cr := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubemoxed", UID: "uid-kubemoxed"},
		Spec: v1alpha1.VirtualMachineSpec{ResourceSpec: v1alpha1.ResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}},
			EnableAutoStart: new(bool),
			CloudInitConfig: &v1alpha1.CloudInitConfig{User: "ops", Custom: &v1alpha1.CloudInitCustom{UserData: "user.yaml"}}}}
	meta.SetExternalName(cr, "620")
	f.store(t, cr, false)
	before, _ := f.sim.Guest(620)
	for range 3 {
		e := f.external()
		obs, err := e.Observe(context.Background(), cr)
		if err != nil {
			t.Fatal(err)
		}
		if obs.ResourceUpToDate {
			break
		}
		if _, err := e.Update(context.Background(), cr); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := f.sim.Guest(620)
	for k, v := range after.Config {
		if k != "description" && k != "digest" && before.Config[k] != v {
			t.Errorf("adoption changed %s: %q -> %q", k, before.Config[k], v)
		}
	}
}

// TestOptionalPasswordSecret checks kubemox's passwordFrom.optional: a
// missing optional Secret sets no password and the VM becomes Ready; once
// the Secret exists, its password is applied. A missing Secret that is not
// optional is an error.
func TestOptionalPasswordSecret(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	yes := true
	ref := &v1alpha1.OptionalSecretKeySelector{LocalSecretKeySelector: v1alpha1.LocalSecretKeySelector{Name: "ci-later", Key: "password"}, Optional: &yes}
	cr := scratchWithCloudInit("optionalpw", &v1alpha1.CloudInitConfig{User: "ops", PasswordFrom: ref})
	f.store(t, cr, true)
	f.converge(t, cr, 20)
	vmid, _ := guest.VMIDOf(meta.GetExternalName(cr))
	if g, _ := f.sim.Guest(vmid); g.Config["cipassword"] != "" || g.Config["ciuser"] != "ops" {
		t.Fatalf("without the optional Secret: ciuser %q, cipassword set %v", g.Config["ciuser"], g.Config["cipassword"] != "")
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ci-later"}, Data: map[string][]byte{"password": []byte("later-pw")}}
	if err := f.kube.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	f.converge(t, cr, 20)
	if g, _ := f.sim.Guest(vmid); g.Config["cipassword"] == "" {
		t.Error("the optional Secret's password was not applied once it existed")
	}

	strict := pending(t, f, scratchWithCloudInit("strictpw", &v1alpha1.CloudInitConfig{User: "ops",
		PasswordFrom: &v1alpha1.OptionalSecretKeySelector{LocalSecretKeySelector: v1alpha1.LocalSecretKeySelector{Name: "absent", Key: "password"}}}))
	_, err := f.external().Create(context.Background(), strict)
	if diff := cmp.Diff(guest.ErrPasswordSecretUnreadable, err, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("a missing Secret that is not optional: -want, +got:\n%s", diff)
	}
}
