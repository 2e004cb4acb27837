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
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

func TestFindRefusesToGuess(t *testing.T) {
	c := &Connection{Guests: []pve.Resource{
		{Type: "qemu", VMID: 131, Node: "pve2", Name: "dup"},
		{Type: "qemu", VMID: 130, Node: "pve2", Name: "dup"},
		{Type: "qemu", VMID: 140, Node: "pve1", Name: "dup"},
		{Type: "lxc", VMID: 150, Node: "pve1", Name: "web"},
		{Type: "qemu", VMID: 101, Node: "pve1", Name: "web"},
	}}
	if g, err := c.Find("qemu", "dup", "pve1"); err != nil || g.VMID != 140 {
		t.Errorf("dup on pve1: %v %v, want VMID 140 (the only one on that node)", g.VMID, err)
	}
	if _, err := c.Find("qemu", "dup", "pve2"); err == nil || !strings.Contains(err.Error(), `2 guests named "dup" on node pve2 (VMIDs 130, 131)`) {
		t.Errorf("dup on pve2: %v, want both VMIDs named", err)
	}
	if g, err := c.Find("qemu", "web", ""); err != nil || g.VMID != 101 {
		t.Errorf("qemu web: %v %v, want 101 (the container of that name is another kind)", g.VMID, err)
	}
	if _, err := c.Find("qemu", "gone", "pve1"); err == nil || !strings.Contains(err.Error(), "renamed or deleted") {
		t.Errorf("missing guest: %v", err)
	}
}

func TestMappingOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.yaml")
	raw := "default: proxmox\nkinds: {StorageDownloadURL: images}\nlabels:\n- selector: {matchLabels: {team: web}}\n  namespace: team-web\n"
	if err := os.WriteFile(path, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := LoadMapping(path, "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind   string
		labels map[string]string
		want   string
	}{
		{"VirtualMachine", nil, "proxmox"},
		{"StorageDownloadURL", nil, "images"},
		{"StorageDownloadURL", map[string]string{"team": "web"}, "team-web"},
	} {
		if got, err := m.NamespaceFor(c.kind, c.labels); err != nil || got != c.want {
			t.Errorf("%s %v: %q %v, want %q", c.kind, c.labels, got, err, c.want)
		}
	}
	if err := os.WriteFile(path, []byte("kinds: {VirtualMachines: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMapping(path, "default"); err == nil {
		t.Error("a mapping naming an unknown kind was accepted")
	}
}

func TestSnapshotName(t *testing.T) {
	taken := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	snaps := []pve.Snapshot{{Name: "snapshot_2024_05_01T10_00_00Z"}, {Name: "before-upgrade"}}
	obj := func(spec map[string]any, ann map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetAnnotations(ann)
		u.SetCreationTimestamp(metav1.NewTime(taken.Add(time.Hour)))
		return u
	}
	for _, c := range []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"snapshotName", obj(map[string]any{"snapshotName": "before-upgrade"}, nil), "before-upgrade"},
		{"kubemox's time name", obj(map[string]any{"timestamp": taken.Format(time.RFC3339)}, nil), "snapshot_2024_05_01T10_00_00Z"},
		{"annotation set by a human", obj(map[string]any{}, map[string]string{annotationExternalName: "before-upgrade"}), "before-upgrade"},
		{"not on the guest", obj(map[string]any{"snapshotName": "gone"}, nil), ""},
		{"nothing to go by", obj(map[string]any{}, nil), ""},
	} {
		got, err := snapshotName(c.obj, snaps)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestOurCRDs(t *testing.T) {
	kubemox := &apiextensionsv1.CustomResourceDefinition{}
	ours := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "apiextensions.crossplane.io/v1alpha1", Kind: "ManagedResourceDefinition", Name: "x"}}}}
	applied := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationCRDSource: crdSourceOurs}}}
	if IsOurCRD(kubemox) || !IsOurCRD(ours) || !IsOurCRD(applied) {
		t.Errorf("kubemox's %v, Crossplane's %v, applied %v", IsOurCRD(kubemox), IsOurCRD(ours), IsOurCRD(applied))
	}
}

func TestExportRefusesAnUncleanPlan(t *testing.T) {
	p := &Plan{Items: []*Item{{Problems: []string{"two guests"}}}}
	if _, err := Export(p, t.TempDir()); !errors.Is(err, ErrNotClean) {
		t.Errorf("export of an unclean plan: %v", err)
	}
}

func TestSecretsApplyAsData(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"kind": "Secret", "stringData": map[string]any{"password": "pw"}}}
	got := forApply(u)
	if _, ok := got.Object["stringData"]; ok {
		t.Error("stringData kept")
	}
	if d, _, _ := unstructured.NestedString(got.Object, "data", "password"); d != base64.StdEncoding.EncodeToString([]byte("pw")) {
		t.Errorf("data.password %q", d)
	}
}

func TestExportWritesSecretsThenManifest(t *testing.T) {
	m := &unstructured.Unstructured{Object: map[string]any{"apiVersion": Group + "/v1alpha1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": "web", "namespace": "default"}}}
	it := &Item{Source: Source{Kind: Kinds[1], Obj: m}, Manifest: m}
	it.Secrets = append(it.Secrets, secretManifest(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-cloudinit", Namespace: "default"},
		StringData: map[string]string{"password": "pw"}}))
	dir := t.TempDir()
	if _, err := Export(&Plan{Items: []*Item{it}}, dir); err != nil {
		t.Fatal(err)
	}
	objs, err := ReadExport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetKind() != "Secret" || objs[1].GetKind() != "VirtualMachine" {
		t.Fatalf("read back %d objects: %v", len(objs), objs)
	}
}

func TestOnlyForeignOwnersNeedAHuman(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetOwnerReferences([]metav1.OwnerReference{
		{APIVersion: Group + "/v1alpha1", Kind: "VirtualMachineSnapshotPolicy", Name: "nightly"},
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "x"},
	})
	if got := foreignOwners(u); len(got) != 1 || got[0] != "Deployment x" {
		t.Errorf("foreign owners %v, want only the Deployment", got)
	}
}
