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

package container

import (
	"context"
	"strconv"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/placement"
)

// Create implements managed.TypedExternalClient. It never waits for PVE's
// tasks: an image is pulled first (followed across reconciles), then the
// container is cloned or created at a VMID stored on the resource first,
// and Observe follows it from there.
func (e *external) Create(ctx context.Context, cr *v1alpha1.Container) (managed.ExternalCreation, error) {
	want, err := desiredFrom(ctx, e.secrets, cr)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	if underway, err := guest.CheckPreviousCreate(ctx, e.cl, cr); err != nil || underway {
		return managed.ExternalCreation{}, err
	}
	if want.Node, err = e.placed(cr, want).Node(ctx); err != nil {
		return managed.ExternalCreation{}, err
	}
	if want.Image != nil {
		volid, ready, err := e.ensureImage(ctx, cr, want)
		if err != nil || !ready {
			return managed.ExternalCreation{}, err
		}
		want.Create.OSTemplate = volid
	}
	err = e.identity().CreateAt(ctx, cr, func(vmid int) (string, error) { return e.startCreate(ctx, cr, want, vmid) })
	if err == nil {
		meta.AddAnnotations(cr, map[string]string{annotationSource: sourceAnnotation(cr.Spec.Source())})
	}
	return managed.ExternalCreation{AdditionalDetails: changelog.Created(cr)}, err
}

// startCreate clones the template or creates from the archive at vmid.
func (e *external) startCreate(ctx context.Context, cr *v1alpha1.Container, want desired, vmid int) (string, error) {
	description := guest.WithMarker("", e.identity().MarkerOf(cr))
	if want.Clone == "" {
		c := want.Create
		c.Description = description
		upid, err := e.cl.CreateGuest(ctx, pve.GuestRef{Type: pve.LXC, Node: want.Node, VMID: vmid}, want.Spec.CreateParams(c))
		if err == nil {
			e.Record.Event(cr, event.Normal(guest.ReasonCreating, "creating container "+strconv.Itoa(vmid)+" on node "+want.Node+" from "+c.OSTemplate))
		}
		return upid, err
	}
	opts := pve.CloneOptions{NewID: vmid, Name: cr.Spec.Name, Description: description, Full: want.FullClone, Storage: want.CloneStorage}
	return e.identity().CloneTemplate(ctx, cr, want.Clone, want.Node, opts)
}

// placed picks the node of a container created with spec.placement and no
// nodeName, before an image is pulled onto it.
func (e *external) placed(cr *v1alpha1.Container, want desired) placement.Guest {
	return placement.Guest{Reader: e.cl, Record: e.Record, Object: cr, Spec: cr.Spec.Placement, NodeName: cr.Spec.NodeName, Status: &cr.Status.Placement,
		Clone: placement.CloneOf(pve.LXC, want.Clone, want.FullClone, want.CloneStorage)}
}

// ensureImage makes the spec's OCI image available as a container template
// on the node and returns its volume, or ready false while a pull (or the
// removal of an older file under the same name) runs. PVE refuses to
// overwrite a file, so a file left by another reference the provider pulled
// for this resource is removed first; a file nobody pulled for it is used
// as it is. A failed pull is an error carrying PVE's message (a node
// without skopeo, an unknown image), retried with the reconciler's backoff.
func (e *external) ensureImage(ctx context.Context, cr *v1alpha1.Container, want desired) (string, bool, error) {
	img := want.Image
	volid := pve.OCIImageVolID(img.Storage, img.Reference)
	if done, err := e.pullFinished(ctx, cr); err != nil || !done {
		return "", false, err
	}
	present, err := e.cl.HasTemplateVolume(ctx, want.Node, img.Storage, volid)
	if err != nil {
		return "", false, err
	}
	if present && !e.staleImageFile(cr, volid) {
		return volid, true, nil
	}
	if present {
		upid, err := e.cl.DeleteVolume(ctx, want.Node, img.Storage, volid)
		if err != nil {
			return "", false, err
		}
		meta.AddAnnotations(cr, map[string]string{annotationPullTask: upid})
		meta.RemoveAnnotations(cr, annotationPulled)
		e.Record.Event(cr, event.Normal(reasonRemovingFile, "removing "+volid+", pulled from another image reference, before pulling "+img.Reference))
		return "", false, nil
	}
	upid, err := e.cl.PullOCIImage(ctx, want.Node, img.Storage, img.Reference)
	if err != nil {
		return "", false, err
	}
	meta.AddAnnotations(cr, map[string]string{annotationPullTask: upid, annotationPulled: img.Reference})
	e.Record.Event(cr, event.Normal(reasonPullingImage, "pulling "+img.Reference+" into "+volid+" on node "+want.Node))
	return "", false, nil
}

// pullFinished follows the pull (or file removal) task Create started: not
// done while it runs; an error with PVE's message when it failed.
func (e *external) pullFinished(ctx context.Context, cr *v1alpha1.Container) (bool, error) {
	upid := cr.GetAnnotations()[annotationPullTask]
	if upid == "" {
		return true, nil
	}
	ts, err := e.cl.TaskStatus(ctx, upid)
	switch {
	case pve.IsTaskUnknown(err):
	case err != nil:
		return false, errors.Wrap(err, "cannot follow the image pull")
	case ts.Running:
		return false, nil
	case ts.Failed():
		meta.RemoveAnnotations(cr, annotationPullTask, annotationPulled)
		return false, errors.Errorf("Proxmox VE task %s failed: %s", ts.Type, ts.ExitStatus)
	case ts.Type == "ociregistrypull":
		e.Record.Event(cr, event.Normal(reasonImagePulled, "pulled "+cr.GetAnnotations()[annotationPulled]))
	}
	meta.RemoveAnnotations(cr, annotationPullTask)
	return true, nil
}

// staleImageFile reports whether the file volid holds another image than
// the spec's: the provider pulled a different reference under that name
// for this resource (the container was created from it, or the pull was
// its last).
func (e *external) staleImageFile(cr *v1alpha1.Container, volid string) bool {
	img := cr.Spec.Template.Image
	pulled := cr.GetAnnotations()[annotationPulled]
	if pulled == "" {
		if src := recordedSource(cr.GetAnnotations()); src != nil {
			pulled = src.ImageReference
		}
	}
	return pulled != "" && pulled != img.Reference && pve.OCIImageVolID(img.Storage, pulled) == volid
}
