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

package virtualmachinesnapshot

import (
	"context"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// target is the guest a snapshot resource is of, as resolved for one
// reconcile.
type target struct {
	// ref is the guest; VMID 0 while the VirtualMachine has none yet.
	ref pve.GuestRef
	// connection is the ProxmoxConnection to reach it through.
	connection *xpv2.ProviderConfigReference
	// vmGone: the named VirtualMachine does not exist.
	vmGone bool
	// what names the guest in messages.
	what string
}

// resolveTarget finds the guest of cr: the VirtualMachine or Container it
// names (its observed VMID and node, and its connection), or spec.vmid on
// spec.nodeName through cr's own connection.
func resolveTarget(ctx context.Context, kube client.Reader, cr *v1alpha1.VirtualMachineSnapshot) (target, error) {
	if cr.Spec.VMID != nil {
		ref := pve.GuestRef{Type: pve.QEMU, Node: cr.Spec.NodeName, VMID: int(*cr.Spec.VMID)}
		return target{ref: ref, connection: cr.GetProviderConfigReference(), what: "VM " + ref.String()}, nil
	}
	kind, name, obj := namedGuest(cr)
	t := target{ref: pve.GuestRef{Type: obj.guestType}, what: kind + " " + name, connection: cr.GetProviderConfigReference()}
	err := kube.Get(ctx, client.ObjectKey{Namespace: cr.GetNamespace(), Name: name}, obj.ModernManaged)
	if kerrors.IsNotFound(err) {
		t.vmGone = true
		return t, nil
	}
	if err != nil {
		return t, errors.Wrapf(err, "cannot get %s %s", kind, name)
	}
	conn := obj.GetProviderConfigReference()
	if namesConnection(cr) && cr.GetProviderConfigReference().Name != conn.Name {
		return t, errors.Errorf("the snapshot names ProxmoxConnection %q but %s %s uses %q: name its connection or none", cr.GetProviderConfigReference().Name, kind, name, conn.Name)
	}
	t.connection = conn
	t.ref.VMID, t.ref.Node = obj.placed()
	return t, nil
}

// guestResource is the VirtualMachine or Container a snapshot names.
type guestResource struct {
	resource.ModernManaged
	guestType pve.GuestType
	// placed is the guest's observed VMID and node.
	placed func() (int, string)
}

// namedGuest is the kind, name and an empty object of the resource cr names.
func namedGuest(cr *v1alpha1.VirtualMachineSnapshot) (string, string, guestResource) {
	if cr.Spec.ContainerName != "" {
		ct := &v1alpha1.Container{}
		return v1alpha1.ContainerKind, cr.Spec.ContainerName, guestResource{ModernManaged: ct, guestType: pve.LXC,
			placed: func() (int, string) { return int(ct.Status.Status.ID), ct.Status.Status.Node }}
	}
	vm := &v1alpha1.VirtualMachine{}
	return v1alpha1.VirtualMachineKind, cr.Spec.VirtualMachineName, guestResource{ModernManaged: vm, guestType: pve.QEMU,
		placed: func() (int, string) { return int(vm.Status.Status.ID), vm.Status.Status.Node }}
}

// namesConnection reports whether cr's spec names a connection itself.
func namesConnection(cr *v1alpha1.VirtualMachineSnapshot) bool {
	return cr.Spec.ConnectionRef != nil || cr.Spec.ProviderConfigReference != nil
}
