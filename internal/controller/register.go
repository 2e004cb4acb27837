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

// Package controller registers every controller of provider-proxmox with a
// manager.
package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/connection"
	"github.com/kubemox/provider-proxmox/internal/controller/container"
	"github.com/kubemox/provider-proxmox/internal/controller/customcertificate"
	"github.com/kubemox/provider-proxmox/internal/controller/gated"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guestimport"
	"github.com/kubemox/provider-proxmox/internal/controller/polling"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
	"github.com/kubemox/provider-proxmox/internal/controller/snapshotpolicy"
	"github.com/kubemox/provider-proxmox/internal/controller/storagedownloadurl"
	"github.com/kubemox/provider-proxmox/internal/controller/virtualmachine"
	"github.com/kubemox/provider-proxmox/internal/controller/virtualmachineset"
	"github.com/kubemox/provider-proxmox/internal/controller/virtualmachinesnapshot"
	"github.com/kubemox/provider-proxmox/internal/controller/virtualmachinetemplate"
)

// SetupGated registers every controller with setups: each is added to mgr
// once the kinds it watches are served, so the provider starts, and stays up,
// with none of its CRDs installed yet. The controllers share clients: the
// ProxmoxConnection controller fills it, managed-resource controllers take
// their Proxmox VE client from it. The guest kinds (VirtualMachine, Container,
// VirtualMachineTemplate) share one VMID allocator: QEMU and LXC guests take
// VMIDs from one cluster-wide range, so allocators of their own could hand a
// VM and a container the same free VMID at once.
//
// They also share one watch of Secret metadata (see secrets.Watch), which
// runs from the start, CRDs or not, and cluster, this management cluster's
// identity in the markers of the guests they create (guest.ClusterIdentity),
// and poll, how the checks of settled managed resources are spaced.
func SetupGated(mgr ctrl.Manager, o controller.Options, clients *pve.Cache, setups *gated.Setups, cluster string, poll polling.Policy) error {
	lw, err := secrets.MetadataListWatch(mgr.GetConfig())
	if err != nil {
		return err
	}
	secretWatch := secrets.NewWatch(lw)
	if err := mgr.Add(secretWatch); err != nil {
		return errors.Wrap(err, "cannot add the Secret watch to the manager")
	}
	shared := guest.Shared{VMIDs: pve.NewVMIDAllocator(0), Cluster: cluster, Polling: poll}
	// The connection controller counts ProviderConfigUsages as well as
	// watching connections.
	setups.Register(v1alpha1.ProxmoxConnectionKind, func() error { return connection.Setup(mgr, o, clients, secretWatch) },
		v1alpha1.ProxmoxConnectionGroupVersionKind, v1alpha1.ProviderConfigUsageGroupVersionKind)
	setups.Register(v1alpha1.VirtualMachineKind, func() error { return virtualmachine.Setup(mgr, o, clients, shared, secretWatch) },
		v1alpha1.VirtualMachineGroupVersionKind)
	setups.Register(v1alpha1.CustomCertificateKind, func() error { return customcertificate.Setup(mgr, o, clients, secretWatch, poll) },
		v1alpha1.CustomCertificateGroupVersionKind)
	setups.Register(v1alpha1.VirtualMachineSetKind, func() error { return virtualmachineset.Setup(mgr, o, clients) },
		v1alpha1.VirtualMachineSetGroupVersionKind, v1alpha1.VirtualMachineGroupVersionKind)
	// GuestImport indexes VirtualMachines and Containers by the guest they name.
	setups.Register(v1alpha1.GuestImportKind, func() error { return guestimport.Setup(mgr, o, clients) },
		v1alpha1.GuestImportGroupVersionKind, v1alpha1.VirtualMachineGroupVersionKind, v1alpha1.ContainerGroupVersionKind)
	setups.Register(v1alpha1.ContainerKind, func() error { return container.Setup(mgr, o, clients, shared, secretWatch) },
		v1alpha1.ContainerGroupVersionKind)
	// A snapshot reads the VirtualMachine it names.
	setups.Register(v1alpha1.VirtualMachineSnapshotKind, func() error { return virtualmachinesnapshot.Setup(mgr, o, clients, poll) },
		v1alpha1.VirtualMachineSnapshotGroupVersionKind, v1alpha1.VirtualMachineGroupVersionKind)
	// A policy lists VirtualMachines and makes VirtualMachineSnapshots.
	setups.Register(v1alpha1.VirtualMachineSnapshotPolicyKind, func() error { return snapshotpolicy.Setup(mgr, o, clients.Metrics()) },
		v1alpha1.VirtualMachineSnapshotPolicyGroupVersionKind, v1alpha1.VirtualMachineSnapshotGroupVersionKind, v1alpha1.VirtualMachineGroupVersionKind)
	setups.Register(v1alpha1.StorageDownloadURLKind, func() error { return storagedownloadurl.Setup(mgr, o, clients, poll) },
		v1alpha1.StorageDownloadURLGroupVersionKind)
	// A template owns the StorageDownloadURL of its image.
	setups.Register(v1alpha1.VirtualMachineTemplateKind, func() error { return virtualmachinetemplate.Setup(mgr, o, clients, shared) },
		v1alpha1.VirtualMachineTemplateGroupVersionKind, v1alpha1.StorageDownloadURLGroupVersionKind)
	return nil
}
