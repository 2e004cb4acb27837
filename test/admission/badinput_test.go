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

package admission

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// kindCases is one kind's admission table: its refused manifests are rows of
// the cross-kind bad-input table.
type kindCases struct {
	kind  string
	cases func() map[string]admissionCase
}

// everyKindsCases lists each kind's table. A new kind adds its line here (and
// its table beside its other admission tests); TestBadInputAcrossKinds fails
// for a kind of package/crds without refused rows.
func everyKindsCases() []kindCases {
	return []kindCases{
		{kind: "ProxmoxConnection", cases: proxmoxConnectionCases},
		{kind: "VirtualMachine", cases: virtualMachineCases},
		{kind: "GuestImport", cases: guestImportCases},
		{kind: "VirtualMachineSet", cases: virtualMachineSetCases},
		{kind: "VirtualMachineSnapshot", cases: virtualMachineSnapshotCases},
		{kind: "VirtualMachineSnapshotPolicy", cases: virtualMachineSnapshotPolicyCases},
		{kind: "Container", cases: containerCases},
		{kind: "CustomCertificate", cases: customCertificateCases},
		{kind: "StorageDownloadURL", cases: storageDownloadURLCases},
		{kind: "VirtualMachineTemplate", cases: virtualMachineTemplateCases},
	}
}

// Bounds of the bad-input table (issue 10 §4).
const (
	minBadInputRows    = 40
	minBadInputPerKind = 3
)

// kindsWithoutSpec are the kinds of package/crds users never write.
var kindsWithoutSpec = []string{"ProviderConfigUsage"}

// TestBadInputAcrossKinds sends every refused manifest of every kind and
// checks that each cause of each rejection names the field it is about:
// a path below spec, or a message naming a field of the kind's schema
// ("template and vmSpec are mutually exclusive"). It also keeps the table
// whole: at least minBadInputRows rows, minBadInputPerKind for every kind the
// package serves.
func TestBadInputAcrossKinds(t *testing.T) {
	crds := loadCRDs(t)
	c := newClient(t)
	total := 0
	covered := map[string]bool{}
	for _, kc := range everyKindsCases() {
		crd, ok := crds[kc.kind]
		if !ok {
			t.Errorf("kind %s has admission cases but no CRD in package/crds", kc.kind)
			continue
		}
		fields := specFieldNames(crd)
		rows := 0
		for name, tc := range kc.cases() {
			if len(tc.wantErr) == 0 {
				continue
			}
			rows++
			t.Run(kc.kind+"/"+name, func(t *testing.T) {
				u := parse(t, tc.manifest)
				if u.GetNamespace() == "" && crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
					u.SetNamespace("default")
				}
				err := c.Create(testContext(t), u, client.DryRunAll)
				if !kerrors.IsInvalid(err) {
					t.Fatalf("want an Invalid rejection, got: %v", err)
				}
				for _, cs := range causes(err) {
					if strings.Contains(cs.Message, notCheckedNotice) {
						continue
					}
					if !namesAField(cs, fields) {
						t.Errorf("the rejection does not name the field: %s: %s", cs.Field, cs.Message)
					}
				}
			})
		}
		total += rows
		covered[kc.kind] = rows >= minBadInputPerKind
	}
	for kind := range crds {
		if !slices.Contains(kindsWithoutSpec, kind) && !covered[kind] {
			t.Errorf("kind %s has fewer than %d refused manifests: add them to its admission table and list it in everyKindsCases", kind, minBadInputPerKind)
		}
	}
	if total < minBadInputRows {
		t.Errorf("%d refused manifests across kinds, want at least %d", total, minBadInputRows)
	}
	t.Logf("%d refused manifests across %d kinds", total, len(everyKindsCases()))
}

// reFieldPath is a cause's field below spec ("spec.template.cores",
// "spec.template.disk[0].size").
var reFieldPath = regexp.MustCompile(`^\.?spec\.[A-Za-z]`)

// namesAField reports whether a rejection cause says which field is wrong:
// by its path, or by naming a field of the schema in its message.
func namesAField(cs cause, fields []string) bool {
	if reFieldPath.MatchString(cs.Field) {
		return true
	}
	for _, f := range fields {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(f) + `\b`).MatchString(cs.Message) {
			return true
		}
	}
	return false
}

// loadCRDs reads package/crds by kind.
func loadCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "package", "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under package/crds: %v", err)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[crd.Spec.Names.Kind] = crd
	}
	return out
}

// specFieldNames lists every property name under spec in the CRD's schema.
func specFieldNames(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var names []string
	var walk func(p apiextensionsv1.JSONSchemaProps)
	walk = func(p apiextensionsv1.JSONSchemaProps) {
		for name, sub := range p.Properties {
			names = append(names, name)
			walk(sub)
		}
		if p.Items != nil && p.Items.Schema != nil {
			walk(*p.Items.Schema)
		}
	}
	for _, v := range crd.Spec.Versions {
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			walk(v.Schema.OpenAPIV3Schema.Properties["spec"])
		}
	}
	return names
}
