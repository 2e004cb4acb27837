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

package composition

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// The sizes the XRDs offer, as the Compositions map them.
var (
	small  = v1alpha1.VirtualMachineHardware{Socket: 1, Cores: 2, Memory: 2048}
	medium = v1alpha1.VirtualMachineHardware{Socket: 1, Cores: 4, Memory: 8192}
	large  = v1alpha1.VirtualMachineHardware{Socket: 2, Cores: 4, Memory: 16384}
)

// The example requests' SSH keys (claim/claim.yaml, namespaced/virtualserver.yaml).
const (
	claimSSHKey      = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleKeyOnly dev@example"
	namespacedSSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleKeyOnly build@example"
)

// xrStatus is what the Compositions report on the XR.
type xrStatus struct {
	VMID      int64  `json:"vmid"`
	Node      string `json:"node"`
	IPAddress string `json:"ipAddress"`
	// Ready is the status of the XR's Ready condition.
	Ready corev1.ConditionStatus `json:"-"`
}

func TestRenderExampleCompositions(t *testing.T) {
	r := requireRenderer(t)

	cases := map[string]struct {
		reason string
		form   exampleForm
		// edit changes the spec of the XR made of the example request.
		edit func(spec map[string]any)
		// observed names a testdata directory of observed composed resources
		// and their connection Secrets; empty for a first render.
		observed   string
		wantVM     *v1alpha1.VirtualMachine
		wantSecret *corev1.Secret
		wantStatus xrStatus
		// wantWarning is part of a warning the function must return.
		wantWarning string
	}{
		"ClaimSmall": {
			reason:     "A small claim composes a VM with 1 socket, 2 cores and 2 GiB in the claim's namespace, cloned from the template on the node, with the SSH key for cloud-init.",
			form:       claimForm,
			edit:       setSpec("size", "small"),
			wantVM:     exampleVM(claimForm, small, claimSSHKey),
			wantStatus: xrStatus{Ready: corev1.ConditionFalse},
		},
		"ClaimMedium": {
			reason:     "A medium claim composes 1 socket, 4 cores and 8 GiB.",
			form:       claimForm,
			edit:       setSpec("size", "medium"),
			wantVM:     exampleVM(claimForm, medium, claimSSHKey),
			wantStatus: xrStatus{Ready: corev1.ConditionFalse},
		},
		"ClaimLarge": {
			reason:     "A large claim composes 2 sockets, 4 cores and 16 GiB.",
			form:       claimForm,
			edit:       setSpec("size", "large"),
			wantVM:     exampleVM(claimForm, large, claimSSHKey),
			wantStatus: xrStatus{Ready: corev1.ConditionFalse},
		},
		"ClaimDefaultSize": {
			reason:     "A claim without a size gets the XRD's default, small.",
			form:       claimForm,
			edit:       deleteSpec("size"),
			wantVM:     exampleVM(claimForm, small, claimSSHKey),
			wantStatus: xrStatus{Ready: corev1.ConditionFalse},
		},
		"ClaimReadyVM": {
			reason:     "Once the VM is Ready the XR (and so the claim) is Ready and shows the VM's VMID, node and address.",
			form:       claimForm,
			edit:       setSpec("size", "small"),
			observed:   "claim-ready",
			wantVM:     exampleVM(claimForm, small, claimSSHKey),
			wantStatus: xrStatus{VMID: 104, Node: "lowtower", IPAddress: "10.0.0.104", Ready: corev1.ConditionTrue},
		},
		"ClaimlessXR": {
			reason:      "An XVirtualMachine made without a claim has no namespace for the VM: nothing is composed and the function says why.",
			form:        claimForm,
			edit:        deleteSpec("claimRef"),
			wantStatus:  xrStatus{Ready: corev1.ConditionFalse},
			wantWarning: `not adding new composed resource "vm" to desired state`,
		},
		"NamespacedSmall": {
			reason:     "A small VirtualServer composes a VM with 1 socket, 2 cores and 2 GiB in its own namespace.",
			form:       namespacedForm,
			edit:       setSpec("size", "small"),
			wantVM:     exampleVM(namespacedForm, small, namespacedSSHKey),
			wantStatus: xrStatus{Ready: corev1.ConditionFalse},
		},
		"NamespacedMedium": {
			reason:     "A medium VirtualServer composes 1 socket, 4 cores and 8 GiB.",
			form:       namespacedForm,
			edit:       setSpec("size", "medium"),
			wantVM:     exampleVM(namespacedForm, medium, namespacedSSHKey),
			wantStatus: xrStatus{Ready: corev1.ConditionFalse},
		},
		"NamespacedLarge": {
			reason:     "A large VirtualServer composes 2 sockets, 4 cores and 16 GiB.",
			form:       namespacedForm,
			edit:       setSpec("size", "large"),
			wantVM:     exampleVM(namespacedForm, large, namespacedSSHKey),
			wantStatus: xrStatus{Ready: corev1.ConditionFalse},
		},
		"NamespacedDefaultSizeNoSSHKey": {
			reason:     "Without a size the XRD's default applies; without an SSH key no cloud-init configuration is composed.",
			form:       namespacedForm,
			edit:       deleteSpec("size", "sshKey"),
			wantVM:     exampleVM(namespacedForm, small, ""),
			wantStatus: xrStatus{Ready: corev1.ConditionFalse},
		},
		"NamespacedReadyVM": {
			reason:   "Once the VM has published vmid, node and ipAddress, a Secret <name>-connection beside the XR holds those three (not the VM's other keys), and the XR is Ready.",
			form:     namespacedForm,
			edit:     setSpec("size", "medium"),
			observed: "namespaced-ready",
			wantVM:   exampleVM(namespacedForm, medium, namespacedSSHKey),
			wantSecret: connectionSecret("team-b", "build-vm-connection", map[string]string{
				"vmid": "117", "node": "pve", "ipAddress": "10.0.0.117",
			}),
			wantStatus: xrStatus{VMID: 117, Node: "pve", IPAddress: "10.0.0.117", Ready: corev1.ConditionTrue},
		},
		"NamespacedVMStarting": {
			reason:   "Before the guest agent reports an address the Secret holds vmid and node only, and the XR is not Ready while the VM is not.",
			form:     namespacedForm,
			edit:     setSpec("size", "medium"),
			observed: "namespaced-starting",
			wantVM:   exampleVM(namespacedForm, medium, namespacedSSHKey),
			wantSecret: connectionSecret("team-b", "build-vm-connection", map[string]string{
				"vmid": "117", "node": "pve",
			}),
			wantStatus: xrStatus{VMID: 117, Node: "pve", Ready: corev1.ConditionFalse},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := exampleXR(t, tc.form)
			spec, _ := xr.Object["spec"].(map[string]any)
			tc.edit(spec)
			out := r.render(t, tc.form, xr, tc.observed)

			if diff := cmp.Diff(tc.wantVM, vmUnderTest(renderedOne[v1alpha1.VirtualMachine](t, out, v1alpha1.SchemeGroupVersion.String(), "VirtualMachine"))); diff != "" {
				t.Errorf("%s\ncomposed VirtualMachine: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantSecret, secretUnderTest(renderedOne[corev1.Secret](t, out, "v1", "Secret"))); diff != "" {
				t.Errorf("%s\ncomposed Secret: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantStatus, statusOf(t, out.xr)); diff != "" {
				t.Errorf("%s\nXR status: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.wantWarning != "" && !hasWarning(out, tc.wantWarning) {
				t.Errorf("%s\nno function warning containing %q in %v", tc.reason, tc.wantWarning, out.results)
			}
			if report := r.validate(t, out); report != "" {
				t.Errorf("%s\nthe rendered resources are not valid:\n%s", tc.reason, report)
			}
		})
	}
}

// exampleXR is the XR the example request stands for. The v2 form's request
// is the XR itself; a claim becomes an XVirtualMachine as Crossplane's claim
// controller makes it: the claim's spec without writeConnectionSecretToRef,
// plus a claimRef, under a generated name.
func exampleXR(t *testing.T, form exampleForm) *unstructured.Unstructured {
	t.Helper()
	if form == namespacedForm {
		return exampleObject(t, namespacedForm.file("virtualserver.yaml"), "VirtualServer")
	}
	claim := exampleObject(t, claimForm.file("claim.yaml"), "VirtualMachineClaim")
	spec, _ := claim.Object["spec"].(map[string]any)
	delete(spec, "writeConnectionSecretToRef")
	spec["claimRef"] = map[string]any{
		"apiVersion": claim.GetAPIVersion(),
		"kind":       claim.GetKind(),
		"name":       claim.GetName(),
		"namespace":  claim.GetNamespace(),
	}
	xr := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	xr.SetAPIVersion(claim.GetAPIVersion())
	xr.SetKind("XVirtualMachine")
	xr.SetName(claim.GetName() + "-x7k2p")
	return xr
}

func setSpec(field string, value any) func(map[string]any) {
	return func(spec map[string]any) { spec[field] = value }
}

func deleteSpec(fields ...string) func(map[string]any) {
	return func(spec map[string]any) {
		for _, f := range fields {
			delete(spec, f)
		}
	}
}

// exampleVM is the VirtualMachine a form's example request composes, with the
// given size and SSH key ("" for none).
func exampleVM(form exampleForm, size v1alpha1.VirtualMachineHardware, sshKey string) *v1alpha1.VirtualMachine {
	// Both forms name the VM, its Proxmox VE name and its connection Secret
	// after the request, in the request's namespace.
	namespace, name, template, node := "team-a", "dev-vm", "debian-12-cloudinit", "lowtower"
	if form == namespacedForm {
		namespace, name, template, node = "team-b", "build-vm", "ubuntu-24.04-cloudinit", "pve"
	}
	clone := &v1alpha1.VirtualMachineCloneSpec{Name: template, VirtualMachineHardware: size}
	if sshKey != "" {
		clone.CloudInitConfig = &v1alpha1.CloudInitConfig{SSHKeys: []string{sshKey}}
	}
	return &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: v1alpha1.ResourceSpec{
				ProviderConfigReference:          &xpv2.ProviderConfigReference{Kind: "ProxmoxConnection", Name: "default"},
				WriteConnectionSecretToReference: &xpv2.LocalSecretReference{Name: name + "-vm-connection"},
			},
			Name:     name,
			NodeName: node,
			Template: clone,
		},
	}
}

// vmUnderTest keeps what the Composition decides: the VM's namespace, name and
// spec (Crossplane adds labels, annotations and an owner reference).
func vmUnderTest(vm *v1alpha1.VirtualMachine) *v1alpha1.VirtualMachine {
	if vm == nil {
		return nil
	}
	return &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: vm.Namespace, Name: vm.Name},
		Spec:       vm.Spec,
	}
}

func connectionSecret(namespace, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Type:       "connection.crossplane.io/v1alpha1",
		Data:       map[string][]byte{},
	}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// secretUnderTest keeps the composed Secret's namespace, name, type and data.
func secretUnderTest(s *corev1.Secret) *corev1.Secret {
	if s == nil {
		return nil
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name},
		Type:       s.Type,
		Data:       s.Data,
	}
}

func statusOf(t *testing.T, xr *unstructured.Unstructured) xrStatus {
	t.Helper()
	var out struct {
		Status struct {
			xrStatus
			Conditions []struct {
				Type   string                 `json:"type"`
				Status corev1.ConditionStatus `json:"status"`
			} `json:"conditions"`
		} `json:"status"`
	}
	data, err := json.Marshal(xr.Object)
	if err != nil {
		t.Fatalf("cannot marshal the rendered XR: %v", err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("cannot read the rendered XR's status: %v\n%s", err, data)
	}
	s := out.Status.xrStatus
	for _, c := range out.Status.Conditions {
		if c.Type == "Ready" {
			s.Ready = c.Status
		}
	}
	return s
}

func hasWarning(r rendered, substr string) bool {
	for _, res := range r.results {
		severity, _, _ := unstructured.NestedString(res.Object, "severity")
		message, _, _ := unstructured.NestedString(res.Object, "message")
		if strings.EqualFold(severity, "Warning") && strings.Contains(message, substr) {
			return true
		}
	}
	return false
}

// TestClaimFormConnectionDetails covers what render cannot show: the engine
// publishes no connection details for a claim-form (legacy) XR. The claim
// form's VM must return exactly the connection details the namespaced form's
// VM returns (NamespacedReadyVM renders those into the Secret), and the XRD
// must pass exactly those keys on to the claim.
func TestClaimFormConnectionDetails(t *testing.T) {
	claim := composedTemplate(t, claimForm, "vm")
	namespaced := composedTemplate(t, namespacedForm, "vm")
	if diff := cmp.Diff(namespaced["connectionDetails"], claim["connectionDetails"]); diff != "" {
		t.Errorf("claim form's connectionDetails differ from the namespaced form's: -namespaced, +claim:\n%s", diff)
	}

	details, _ := claim["connectionDetails"].([]any)
	names := make([]any, 0, len(details))
	for _, d := range details {
		detail, _ := d.(map[string]any)
		names = append(names, detail["name"])
	}
	xrd := exampleObject(t, claimForm.file("definition.yaml"), "CompositeResourceDefinition")
	keys, _, _ := unstructured.NestedSlice(xrd.Object, "spec", "connectionSecretKeys")
	if diff := cmp.Diff([]any{"vmid", "node", "ipAddress"}, keys); diff != "" {
		t.Errorf("XRD connectionSecretKeys: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(keys, names); diff != "" {
		t.Errorf("the VM's connectionDetails are not the XRD's connectionSecretKeys: -keys, +details:\n%s", diff)
	}
}

// composedTemplate is the function-patch-and-transform resource template of
// the given name in a form's Composition.
func composedTemplate(t *testing.T, form exampleForm, name string) map[string]any {
	t.Helper()
	comp := exampleObject(t, form.file("composition.yaml"), "Composition")
	steps, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	for _, s := range steps {
		step, _ := s.(map[string]any)
		resources, _, _ := unstructured.NestedSlice(step, "input", "resources")
		for _, r := range resources {
			if res, _ := r.(map[string]any); res["name"] == name {
				return res
			}
		}
	}
	t.Fatalf("%s Composition has no resource template %q", form, name)
	return nil
}
