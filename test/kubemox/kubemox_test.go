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

package kubemox

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kubemoxKind is a kind as kubemox v0.6.6 publishes it
// (api/proxmox/v1alpha1 of alperencelik/kubemox): seven cluster-scoped
// kinds and the two snapshot kinds namespaced, all in our group.
type kubemoxKind struct {
	kind, plural, short string
	namespaced          bool
	finalizer           string
}

var kubemoxKinds = []kubemoxKind{
	{"VirtualMachine", "virtualmachines", "vm", false, "virtualmachine.proxmox.alperen.cloud/finalizer"},
	{"VirtualMachineSet", "virtualmachinesets", "vmset", false, "virtualmachineset.proxmox.alperen.cloud/finalizer"},
	{"VirtualMachineTemplate", "virtualmachinetemplates", "vmt", false, "virtualmachinetemplate.proxmox.alperen.cloud/finalizer"},
	{"Container", "containers", "ct", false, "container.proxmox.alperen.cloud/finalizer"},
	{"CustomCertificate", "customcertificates", "cc", false, "customcertificate.proxmox.alperen.cloud/finalizer"},
	{"StorageDownloadURL", "storagedownloadurls", "sdu", false, "storagedownloadurl.proxmox.alperen.cloud/finalizer"},
	{"ProxmoxConnection", "proxmoxconnections", "pxc", false, ""},
	{"VirtualMachineSnapshot", "virtualmachinesnapshots", "vms", true, "virtualmachinesnapshot.proxmox.alperen.cloud/finalizer"},
	{"VirtualMachineSnapshotPolicy", "virtualmachinesnapshotpolicies", "vmsp", true, "virtualmachinesnapshotpolicy.proxmox.alperen.cloud/finalizer"},
}

// crd is kubemox's CRD for k: its scope, names and one served version,
// with spec and status kept as they come (the objects below carry
// kubemox's field shapes).
func (k kubemoxKind) crd() *apiextensionsv1.CustomResourceDefinition {
	scope := apiextensionsv1.ClusterScoped
	if k.namespaced {
		scope = apiextensionsv1.NamespaceScoped
	}
	preserve := true
	open := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:        k.plural + ".proxmox.alperen.cloud",
			Annotations: map[string]string{"controller-gen.kubebuilder.io/version": "v0.16.4"},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "proxmox.alperen.cloud",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: k.kind, ListKind: k.kind + "List", Plural: k.plural,
				Singular: lower(k.kind), ShortNames: []string{k.short}},
			Scope: scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
						"spec": open, "status": open,
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// kubemoxObject is a kubemox object of kind, with its finalizer.
func kubemoxObject(kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("proxmox.alperen.cloud/v1alpha1")
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	for _, k := range kubemoxKinds {
		if k.kind == kind && k.finalizer != "" {
			u.SetFinalizers([]string{k.finalizer})
		}
	}
	return u
}

// createAll creates objects, failing with the first error.
func createAll(ctx context.Context, kube client.Client, objs ...client.Object) error {
	for _, o := range objs {
		if err := kube.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}
