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

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func crd(kind string, categories ...string) *unstructured.Unstructured {
	names := map[string]any{"kind": kind}
	if len(categories) > 0 {
		cs := make([]any, 0, len(categories))
		for _, c := range categories {
			cs = append(cs, c)
		}
		names["categories"] = cs
	}
	return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"names": names}}}
}

func TestAlwaysActive(t *testing.T) {
	cases := map[string]struct {
		reason string
		crd    *unstructured.Unstructured
		want   bool
	}{
		"ManagedResource": {
			reason: "a managed resource stays an MRD that an activation policy activates",
			crd:    crd("VirtualMachine", "crossplane", "managed", "proxmox"),
			want:   false,
		},
		"ProviderConfigUnderAnotherName": {
			reason: "Crossplane converts ProxmoxConnection (its kind is not literally ProviderConfig), so it must ship Active",
			crd:    crd("ProxmoxConnection", "crossplane", "proxmox"),
			want:   true,
		},
		"LiteralUsageKind": {
			reason: "Crossplane keeps a kind named ProviderConfigUsage a CRD: no MRD",
			crd:    crd("ProviderConfigUsage", "crossplane", "provider", "proxmox"),
			want:   false,
		},
		"LiteralClusterProviderConfig": {
			reason: "Crossplane keeps a kind named ClusterProviderConfig a CRD: no MRD",
			crd:    crd("ClusterProviderConfig"),
			want:   false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := alwaysActive(tc.crd); got != tc.want {
				t.Errorf("%s\nalwaysActive() = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

// TestGenerateFromPackageCRDs runs the generator over the repository's CRDs: the
// kinds that are not managed resources (ProxmoxConnection, the set, the snapshot
// policy, the import; not ProviderConfigUsage) become MRDs, Active, with the CRD's
// spec unchanged, and a stale MRD in the output directory is removed.
func TestGenerateFromPackageCRDs(t *testing.T) {
	crdDir := filepath.Join("..", "..", "package", "crds")
	out := t.TempDir()
	stale := filepath.Join(out, "stale.yaml")
	if err := os.WriteFile(stale, []byte("kind: Stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := generate(crdDir, out); err != nil {
		t.Fatalf("generate: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(out, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(notManagedCRDs(t, crdDir, out), files); diff != "" {
		t.Fatalf("generated files (-want +got):\n%s", diff)
	}
	const name = "proxmox.alperen.cloud_proxmoxconnections.yaml"
	mrd, err := readObject(filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	src, err := readObject(filepath.Join(crdDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if got := mrd.GetAPIVersion() + "/" + mrd.GetKind(); got != "apiextensions.crossplane.io/v1alpha1/ManagedResourceDefinition" {
		t.Errorf("MRD type = %s", got)
	}
	if diff := cmp.Diff(src.GetName(), mrd.GetName()); diff != "" {
		t.Errorf("MRD name (-crd +mrd):\n%s", diff)
	}
	spec, _, _ := unstructured.NestedMap(mrd.Object, "spec")
	if spec["state"] != "Active" {
		t.Errorf("spec.state = %v, want Active", spec["state"])
	}
	delete(spec, "state")
	crdSpec, _, _ := unstructured.NestedMap(src.Object, "spec")
	if diff := cmp.Diff(crdSpec, spec); diff != "" {
		t.Errorf("MRD spec differs from the CRD's beyond state (-crd +mrd):\n%s", diff)
	}
}

// notManagedCRDs are the output files expected for crdDir's CRDs: one per CRD
// without the managed category, ProviderConfigUsage aside, judged from the files
// themselves rather than by the function under test.
func notManagedCRDs(t *testing.T, crdDir, out string) []string {
	t.Helper()
	crds, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range crds {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), "    - managed\n") && !strings.Contains(string(text), "kind: ProviderConfigUsage\n") {
			want = append(want, filepath.Join(out, filepath.Base(f)))
		}
	}
	if len(want) == 0 {
		t.Fatal("no CRD outside the managed category: the test would prove nothing")
	}
	return want
}
