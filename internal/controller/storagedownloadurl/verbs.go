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

package storagedownloadurl

import (
	"context"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// downloadRequest is the download the spec asks for.
func downloadRequest(cr *v1alpha1.StorageDownloadURL) pve.DownloadRequest {
	p := cr.Spec.DownloadParameters
	return pve.DownloadRequest{
		Node: p.Node, Storage: p.Storage, Content: p.Content, Filename: p.Filename, URL: p.URL,
		Checksum: p.Checksum, ChecksumAlgorithm: p.ChecksumAlgorithm, Compression: p.Compression,
		VerifyCertificate: p.VerifyCertificate,
	}
}

// Create names the volume and starts the download. Its task is recorded in
// the create-task annotation (the reconciler keeps only annotations from
// Create), which Observe then follows. PVE's refusals before any task (a
// wrong extension, a storage not configured for the content type) are
// returned as they are.
func (e *external) Create(ctx context.Context, cr *v1alpha1.StorageDownloadURL) (managed.ExternalCreation, error) {
	meta.SetExternalName(cr, cr.Spec.VolID())
	upid, err := e.cl.DownloadURL(ctx, downloadRequest(cr))
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	meta.AddAnnotations(cr, map[string]string{guest.AnnotationCreateTask: upid})
	e.record.Event(cr, event.Normal(ReasonDownloading, "downloading "+cr.Spec.URL+" to "+cr.Spec.VolID()))
	return managed.ExternalCreation{}, nil
}

// Update replaces the file: the spec asks for another URL or checksum than
// it came from. Proxmox VE's download never replaces a file (pve-common's
// download_file_from_url refuses to override one, and with a checksum only
// checks the file there), so the file is removed first; Observe then finds
// it gone and Create downloads it anew. Update follows the Observe of the
// same reconcile, which read the file.
func (e *external) Update(ctx context.Context, cr *v1alpha1.StorageDownloadURL) (managed.ExternalUpdate, error) {
	volid := volumeOf(cr)
	if e.stored.Protected {
		// PVE would refuse the removal in a failed task, again on every retry.
		return managed.ExternalUpdate{}, errors.Errorf("%s is protected in Proxmox VE: it cannot be replaced by the download of %s until it is unprotected", volid, cr.Spec.URL)
	}
	reason := "the url or checksum changed: removing " + volid + " to download " + cr.Spec.URL + " in its place"
	return managed.ExternalUpdate{}, e.remove(ctx, cr, ReasonReplacing, reason)
}

// Delete removes the file, once no task of ours runs on it (a download
// finishing after the removal would bring it back).
func (e *external) Delete(ctx context.Context, cr *v1alpha1.StorageDownloadURL) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, e.remove(ctx, cr, guest.ReasonDeleting, "removing "+volumeOf(cr))
}

// remove starts PVE's removal of the file unless a task of ours still runs.
// A removal PVE refused (a protected volume) is returned with PVE's reason,
// and tried again on the reconciler's backoff.
func (e *external) remove(ctx context.Context, cr *v1alpha1.StorageDownloadURL, reason event.Reason, msg string) error {
	last := cr.Status.LastTask
	if guest.TaskUnderway(last) {
		return nil
	}
	if last != nil && last.Type == taskDelete && guest.LastTaskFailed(last) {
		failure := guest.TaskFailure(ctx, e.cl, last)
		cr.Status.LastTask = nil
		return errors.Errorf("Proxmox VE did not remove %s: %s", volumeOf(cr), failure)
	}
	volid := volumeOf(cr)
	storage, _, _ := strings.Cut(volid, ":")
	upid, err := e.cl.DeleteVolume(ctx, cr.Spec.Node, storage, volid)
	if err != nil {
		return err
	}
	guest.RecordTask(&cr.Status.LastTask, upid)
	e.record.Event(cr, event.Normal(reason, msg))
	return nil
}

// Disconnect implements managed.TypedExternalClient.
func (e *external) Disconnect(context.Context) error { return nil }
