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

package virtualmachinetemplate

import (
	"context"
	"maps"
	"strconv"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
)

// The disk imported from the image, and PVE's task types the build follows.
const (
	bootDisk    = "scsi0"
	taskDestroy = "qmdestroy"
)

// Create takes the next build step: the image, the VM, the conversion. It
// waits (does nothing) while the image downloads or a task of ours runs.
func (e *external) Create(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate) (managed.ExternalCreation, error) {
	if err := e.checkSnippets(ctx, cr); err != nil {
		return managed.ExternalCreation{}, err
	}
	image, err := e.ensureImage(ctx, cr)
	if err != nil || image == "" {
		return managed.ExternalCreation{}, err
	}
	underway, err := guest.CheckPreviousCreate(ctx, e.cl, cr)
	if err != nil || underway {
		return managed.ExternalCreation{}, err
	}
	vmid, _, err := e.id.Claim(ctx, cr)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	vm, present, err := e.find(ctx, cr, vmid)
	switch {
	case err != nil:
		return managed.ExternalCreation{}, err
	case !present:
		return managed.ExternalCreation{}, e.createVM(ctx, cr, vmid, image)
	case vm.status.Lock != "" || vm.status.Template:
		return managed.ExternalCreation{}, nil
	}
	return managed.ExternalCreation{}, e.convert(ctx, cr, vm.ref)
}

// checkSnippets refuses a cloudInitConfig.custom naming a snippet volume
// that does not exist on the node: PVE would store the cicustom and fail
// only when it builds the cloud-init drive of a clone's first start.
func (e *external) checkSnippets(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate) error {
	ci := cr.Spec.CloudInitConfig
	if ci == nil || ci.Custom == nil {
		return nil
	}
	vols := guest.CloudInitOf(ci).CustomVolumes()
	return errors.Wrap(e.cl.CheckPrerequisites(ctx, pve.Prerequisites{Node: cr.Spec.NodeName, Volumes: vols}), "cannot write cloudInitConfig.custom")
}

// createVM starts the one qmcreate that makes the VM: the disk imported
// from image, the cloud-init drive and keys, the boot order, the marker.
func (e *external) createVM(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate, vmid int, image string) error {
	params, err := e.createParams(ctx, cr, image)
	if err != nil {
		return err
	}
	ref := pve.GuestRef{Type: pve.QEMU, Node: cr.Spec.NodeName, VMID: vmid}
	upid, err := e.cl.CreateGuest(ctx, ref, params)
	if pve.IsAlreadyExists(err) {
		// Someone's VM took the VMID: Observe decides whose.
		return nil
	}
	if err != nil {
		return err
	}
	meta.AddAnnotations(cr, map[string]string{guest.AnnotationCreateTask: upid})
	e.record.Event(cr, event.Normal(guest.ReasonCreating, "creating VM "+strconv.Itoa(vmid)+" with its disk imported from "+image))
	return nil
}

// The VirtualMachineTemplate's field tables: each row maps an API field to
// the PVE key pve.QEMUFields (or pve.QEMUNICFields) knows the codec and
// default of.
var (
	specFields    = guest.Fields{{Path: "name", Key: "name"}}
	configFields  = guest.Fields{{Path: "cores", Key: "cores"}, {Path: "sockets", Key: "sockets"}, {Path: "memory", Key: "memory"}}
	networkFields = guest.Fields{{Path: "bridge", Key: "bridge"}}
)

// createParams are the keys of the template VM.
func (e *external) createParams(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate, image string) (map[string]string, error) {
	hw := &cr.Spec.VirtualMachineConfig
	config := specFields.Values(&cr.Spec)
	maps.Copy(config, configFields.Values(hw))
	spec := pve.VMSpec{
		Config:           config,
		Disks:            map[string]pve.VMDisk{bootDisk: {Storage: hw.DiskStorage(), ImportFrom: image}},
		NICs:             []pve.VMNIC{{Model: hw.Network.Model, Options: networkFields.Values(&hw.Network)}},
		CloudInit:        &pve.VMCloudInit{},
		AdditionalConfig: cr.Spec.AdditionalConfig,
	}
	ci := cr.Spec.CloudInitConfig
	if ci != nil {
		spec.CloudInit = guest.CloudInitOf(ci)
	}
	params := spec.CreateParams(guest.WithMarker("", e.id.MarkerOf(cr)))
	if ci == nil {
		return params, nil
	}
	pw, err := guest.CloudInitPasswordOf(ctx, secrets.NewReader(e.secrets), cr, ci)
	if err != nil {
		return nil, err
	}
	if pw != nil {
		params["cipassword"] = pw.Value
	}
	return params, nil
}

// convert starts turning the VM into a template.
func (e *external) convert(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate, ref pve.GuestRef) error {
	upid, err := e.cl.ConvertToTemplate(ctx, ref)
	if err != nil {
		return err
	}
	meta.AddAnnotations(cr, map[string]string{guest.AnnotationCreateTask: upid})
	e.record.Event(cr, event.Normal(ReasonConverting, "converting VM "+ref.String()+" to a template"))
	return nil
}

// Delete destroys the template (or the half-built VM). Proxmox VE refuses
// to destroy a template whose disks linked clones still use: that reason
// is returned, and the deletion tried again on the reconciler's backoff.
func (e *external) Delete(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate) (managed.ExternalDelete, error) {
	vmid, ok := guest.VMIDOf(meta.GetExternalName(cr))
	if !ok {
		return managed.ExternalDelete{}, nil
	}
	last := cr.Status.LastTask
	if last != nil && last.Type == taskDestroy && guest.LastTaskFailed(last) {
		msg := guest.TaskFailure(ctx, e.cl, last)
		cr.Status.LastTask = nil
		return managed.ExternalDelete{}, errors.Errorf("Proxmox VE did not destroy template %d: %s", vmid, msg)
	}
	if guest.TaskUnderway(last) {
		return managed.ExternalDelete{}, nil
	}
	vm, present, err := e.find(ctx, cr, vmid)
	if err != nil || !present {
		return managed.ExternalDelete{}, err
	}
	d := guest.Deleter{Client: e.cl, Record: e.record, Noun: "template", ShutdownTimeout: shutdownTimeout}
	return managed.ExternalDelete{}, d.Step(ctx, cr, &cr.Status.LastTask, vm.ref)
}

// shutdownTimeout is for a half-built VM someone started; a template never
// runs.
const shutdownTimeout = 60
