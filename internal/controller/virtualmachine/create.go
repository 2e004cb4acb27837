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
	"strconv"

	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/placement"
)

// Create implements managed.TypedExternalClient. It never waits for PVE's
// task: Observe follows the guest from its VMID.
func (e *external) Create(ctx context.Context, cr *v1alpha1.VirtualMachine) (managed.ExternalCreation, error) {
	want, err := desiredFrom(ctx, e.secrets, cr)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	if ref := cr.Spec.Template; ref != nil && ref.TemplateRef != nil {
		if want.Source, err = e.builtTemplate(ctx, cr.Namespace, ref.TemplateRef.Name); err != nil {
			return managed.ExternalCreation{}, err
		}
	}
	if underway, err := guest.CheckPreviousCreate(ctx, e.cl, cr, want.secrets()...); err != nil || underway {
		return managed.ExternalCreation{}, err
	}
	if want.Node, err = e.placed(cr, want).Node(ctx); err != nil {
		return managed.ExternalCreation{}, err
	}
	// Before a VMID is picked: a spec naming what the node lacks, or a
	// template that does not exist, is refused here, in seconds, with
	// nothing created in Proxmox.
	if err := e.cl.CheckPrerequisites(ctx, want.prerequisites()); err != nil {
		return managed.ExternalCreation{}, err
	}
	if want.Source != "" {
		if _, err := e.identity().FindTemplate(ctx, want.Source, want.Node, guest.TemplateListingAge); err != nil {
			return managed.ExternalCreation{}, err
		}
	}
	err = e.identity().CreateAt(ctx, cr, func(vmid int) (string, error) { return e.startCreate(ctx, cr, want, vmid) })
	return managed.ExternalCreation{AdditionalDetails: changelog.Created(cr)}, err
}

// startCreate clones the template or creates from scratch at vmid.
func (e *external) startCreate(ctx context.Context, cr *v1alpha1.VirtualMachine, want desired, vmid int) (string, error) {
	description := guest.WithMarker("", e.identity().MarkerOf(cr))
	if want.Source == "" {
		if cr.Spec.Template != nil {
			e.Record.Event(cr, event.Normal(reasonCreatingFromScratch, "spec.template has no name: creating the VM from scratch with its hardware"))
		}
		upid, err := e.cl.CreateGuest(ctx, pve.GuestRef{Type: pve.QEMU, Node: want.Node, VMID: vmid}, want.Spec.CreateParams(description))
		if err == nil {
			e.Record.Event(cr, event.Normal(guest.ReasonCreating, "creating VM "+strconv.Itoa(vmid)+" on node "+want.Node))
		}
		return upid, err
	}
	opts := pve.CloneOptions{NewID: vmid, Name: cr.Spec.Name, Description: description, Full: want.FullClone, Storage: want.CloneStorage}
	return e.identity().CloneTemplate(ctx, cr, want.Source, want.Node, opts)
}

// builtTemplate is the Proxmox name of the template the
// VirtualMachineTemplate name in namespace ns built; an error until it is
// built.
func (e *external) builtTemplate(ctx context.Context, ns, name string) (string, error) {
	t := &v1alpha1.VirtualMachineTemplate{}
	if err := e.Kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, t); err != nil {
		return "", errors.Wrapf(err, "cannot read VirtualMachineTemplate %s/%s (template.templateRef)", ns, name)
	}
	if t.Status.Step != v1alpha1.TemplateStepDone {
		return "", errors.Errorf("VirtualMachineTemplate %s/%s (template.templateRef) is not built yet", ns, name)
	}
	return t.Spec.Name, nil
}

// placed picks the node of a VM created with spec.placement and no
// nodeName, before its prerequisites are checked on that node.
func (e *external) placed(cr *v1alpha1.VirtualMachine, want desired) placement.Guest {
	g := placement.Guest{Reader: e.cl, Record: e.Record, Object: cr, Spec: cr.Spec.Placement, NodeName: cr.Spec.NodeName, Status: &cr.Status.Placement,
		Check: e.prerequisitesOn(want), Clone: placement.CloneOf(pve.QEMU, want.Source, want.FullClone, want.CloneStorage)}
	return g
}

// prerequisitesOn checks the VM's prerequisites on a node placement
// considers: a node lacking a storage, volume or bridge the VM names is
// skipped with CheckPrerequisites' reason.
func (e *external) prerequisitesOn(want desired) placement.Check {
	return func(ctx context.Context, node string) (string, error) {
		p := want.prerequisites()
		p.Node = node
		err := e.cl.CheckPrerequisites(ctx, p)
		if errors.Is(err, pve.ErrMissingPrerequisite) {
			return err.Error(), nil
		}
		return "", err
	}
}
