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
	"sort"
	"strconv"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// Create implements managed.TypedExternalClient. It never waits for PVE's
// task: Observe follows the guest from its VMID.
func (e *external) Create(ctx context.Context, cr *v1alpha1.VirtualMachine) (managed.ExternalCreation, error) {
	want, err := desiredFrom(ctx, e.secrets, cr)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	if underway, err := guest.CheckPreviousCreate(ctx, e.cl, cr); err != nil || underway {
		return managed.ExternalCreation{}, err
	}
	for attempt := 0; attempt < maxCreateAttempts; attempt++ {
		vmid, fresh, err := e.identity().Claim(ctx, cr)
		if err != nil {
			return managed.ExternalCreation{}, err
		}
		upid, err := e.startCreate(ctx, cr, want, vmid)
		switch {
		case err == nil:
			meta.AddAnnotations(cr, map[string]string{guest.AnnotationCreateTask: upid})
			return managed.ExternalCreation{}, nil
		case pve.IsAlreadyExists(err) && !fresh:
			// A guest appeared at the VMID this resource already held: it may
			// be our own earlier request whose answer was lost. Only Observe's
			// marker rules may give the VMID up.
			e.record.Event(cr, event.Normal(guest.ReasonVMIDInUse, "VM "+strconv.Itoa(vmid)+" exists now; waiting to see whose it is"))
			return managed.ExternalCreation{}, nil
		case pve.IsAlreadyExists(err):
			// PVE refused atomically, and we never asked for this VMID
			// before: nothing of ours exists at vmid.
			e.record.Event(cr, event.Normal(guest.ReasonVMIDTaken, "VMID "+strconv.Itoa(vmid)+" is taken; picking another"))
			guest.ForgetExternalName(cr)
		case pve.IsLocked(err):
			// The template is busy (another clone): try again after the
			// reconciler's backoff, without an error condition.
			e.record.Event(cr, event.Normal(reasonSourceBusy, "the template is locked by another operation; retrying"))
			return managed.ExternalCreation{}, nil
		default:
			return managed.ExternalCreation{}, err
		}
	}
	return managed.ExternalCreation{}, errors.Errorf("gave up after %d VMIDs that were taken", maxCreateAttempts)
}

// startCreate clones the template or creates from scratch at vmid.
func (e *external) startCreate(ctx context.Context, cr *v1alpha1.VirtualMachine, want desired, vmid int) (string, error) {
	description := guest.WithMarker("", guest.MarkerOf(cr))
	if want.Source == "" {
		if cr.Spec.Template != nil {
			e.record.Event(cr, event.Normal(reasonCreatingFromScratch, "spec.template has no name: creating the VM from scratch with its hardware"))
		}
		upid, err := e.cl.CreateGuest(ctx, pve.GuestRef{Type: pve.QEMU, Node: want.Node, VMID: vmid}, want.Spec.CreateParams(description))
		if err == nil {
			e.record.Event(cr, event.Normal(guest.ReasonCreating, "creating VM "+strconv.Itoa(vmid)+" on node "+want.Node))
		}
		return upid, err
	}
	src, err := e.findTemplate(ctx, want.Source, want.Node)
	if err != nil {
		return "", err
	}
	opts := pve.CloneOptions{NewID: vmid, Name: want.Spec.Name, Description: description, Full: want.FullClone, Storage: want.CloneStorage}
	if src.Node != want.Node {
		opts.Target = want.Node
	}
	upid, err := e.cl.CloneGuest(ctx, src, opts)
	if err == nil {
		kind := "full"
		if !want.FullClone {
			kind = "linked"
		}
		e.record.Event(cr, event.Normal(reasonCloning, "cloning template "+want.Source+" ("+src.String()+") to VM "+strconv.Itoa(vmid)+" on node "+want.Node+" ("+kind+" clone)"))
	}
	return upid, err
}

// findTemplate finds a QEMU template by name, preferring one on node.
func (e *external) findTemplate(ctx context.Context, name, node string) (pve.GuestRef, error) {
	rows, err := e.cl.CachedClusterResources(ctx, templateResourcesAge)
	if err != nil {
		return pve.GuestRef{}, err
	}
	var found []pve.GuestRef
	for _, r := range rows {
		if r.Template && r.Name == name && (r.Type == "" || r.Type == string(pve.QEMU)) {
			found = append(found, pve.GuestRef{Type: pve.QEMU, Node: r.Node, VMID: r.VMID})
		}
	}
	if len(found) == 0 {
		return pve.GuestRef{}, errors.Errorf("template %q not found in Proxmox VE", name)
	}
	sort.Slice(found, func(i, j int) bool {
		if (found[i].Node == node) != (found[j].Node == node) {
			return found[i].Node == node
		}
		return found[i].VMID < found[j].VMID
	})
	return found[0], nil
}
