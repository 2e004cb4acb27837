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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Group is kubemox's API group, which provider-proxmox keeps.
const Group = "proxmox.alperen.cloud"

// Names this package uses often.
const (
	kindVM       = "VirtualMachine"
	kindTemplate = "VirtualMachineTemplate"
	keySpec      = "spec"
	keyName      = "name"
)

// Kind is one kubemox kind this tool migrates.
type Kind struct {
	Name   string // VirtualMachine
	Plural string // virtualmachines
	// ClusterScoped is kubemox's scope; ours is namespaced for every kind
	// but ProxmoxConnection.
	ClusterScoped bool
	// Managed kinds are Crossplane managed resources on our side: they get
	// an external name and managementPolicies.
	Managed bool
	// Guest is "qemu" or "lxc" for kinds naming a guest.
	Guest string
}

// CRDName is the kind's CustomResourceDefinition name.
func (k Kind) CRDName() string { return k.Plural + "." + Group }

// Kinds are kubemox v0.6.6's kinds, in the order they are exported:
// connections first, since every other object names one.
var Kinds = []Kind{
	{Name: "ProxmoxConnection", Plural: "proxmoxconnections", ClusterScoped: true},
	{Name: kindVM, Plural: "virtualmachines", ClusterScoped: true, Managed: true, Guest: "qemu"},
	{Name: "VirtualMachineSet", Plural: "virtualmachinesets", ClusterScoped: true},
	{Name: kindTemplate, Plural: "virtualmachinetemplates", ClusterScoped: true, Managed: true, Guest: "qemu"},
	{Name: "Container", Plural: "containers", ClusterScoped: true, Managed: true, Guest: "lxc"},
	{Name: "CustomCertificate", Plural: "customcertificates", ClusterScoped: true, Managed: true},
	{Name: "StorageDownloadURL", Plural: "storagedownloadurls", ClusterScoped: true, Managed: true},
	{Name: "VirtualMachineSnapshot", Plural: "virtualmachinesnapshots", Managed: true},
	{Name: "VirtualMachineSnapshotPolicy", Plural: "virtualmachinesnapshotpolicies"},
}

// KindNamed returns the kind called name.
func KindNamed(name string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// AnnotationCRDSource marks the CRDs this tool applies (without
// Crossplane) as provider-proxmox's, so a later run never takes them for
// kubemox's.
const AnnotationCRDSource = "kubemox-migrate.proxmox.alperen.cloud/crd-source"

// crdSourceOurs is AnnotationCRDSource's value on our CRDs.
const crdSourceOurs = "provider-proxmox"

// IsOurCRD says whether crd is provider-proxmox's rather than kubemox's:
// Crossplane made it from one of our package's definitions (an owner in a
// crossplane.io group), or this tool applied it. kubemox's carry neither.
func IsOurCRD(crd *apiextensionsv1.CustomResourceDefinition) bool {
	if crd.Annotations[AnnotationCRDSource] == crdSourceOurs {
		return true
	}
	for _, o := range crd.OwnerReferences {
		if isCrossplaneGroup(o.APIVersion) {
			return true
		}
	}
	return false
}

func isCrossplaneGroup(apiVersion string) bool {
	for _, g := range []string{"pkg.crossplane.io/", "apiextensions.crossplane.io/"} {
		if len(apiVersion) >= len(g) && apiVersion[:len(g)] == g {
			return true
		}
	}
	return false
}

// servedVersion is the version objects are read in: the storage version
// when it is served, else the first served one.
func servedVersion(crd *apiextensionsv1.CustomResourceDefinition) (string, bool) {
	first := ""
	for _, v := range crd.Spec.Versions {
		if v.Served && v.Storage {
			return v.Name, true
		}
		if v.Served && first == "" {
			first = v.Name
		}
	}
	return first, first != ""
}
