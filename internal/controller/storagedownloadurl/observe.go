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
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// PVE's task types for a download and for removing a volume.
const (
	taskDownload = "download"
	taskDelete   = "imgdel"
)

// Reasons of this kind's Ready condition and events.
const (
	ReasonDownloadFailed xpv2.ConditionReason = "DownloadFailed"
	ReasonFileConflict   xpv2.ConditionReason = "FileConflict"

	ReasonDownloading event.Reason = "Downloading"
	ReasonReplacing   event.Reason = "Replacing"
	ReasonConflict    event.Reason = "FileConflict"
)

// Connection-detail keys.
const (
	ConnectionDetailVolID   = "volid"
	ConnectionDetailStorage = "storage"
)

// external observes and changes one StorageDownloadURL's file.
type external struct {
	cl        Proxmox
	record    event.Recorder
	retryBase time.Duration
	// stored is the file this reconcile's Observe found.
	stored pve.Volume
}

// volumeOf is the resource's volume: its external name once set (an import
// names it there), else what the spec downloads to.
func volumeOf(cr *v1alpha1.StorageDownloadURL) string {
	if name := meta.GetExternalName(cr); name != "" {
		return name
	}
	return cr.Spec.VolID()
}

// contentOf is the content type in a file volume id ("local:iso/x.iso" is
// iso).
func contentOf(volid string) string {
	_, name, _ := strings.Cut(volid, ":")
	content, _, _ := strings.Cut(name, "/")
	return content
}

// Observe follows the task under way, then reads the file from the
// storage's content list.
func (e *external) Observe(ctx context.Context, cr *v1alpha1.StorageDownloadURL) (managed.ExternalObservation, error) {
	volid := volumeOf(cr)
	if guest.KeptByProtection(e.record, cr, cr.Spec.DeletionProtection, "file "+volid) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	cr.Status.VolID = volid
	if guest.FollowLaterCreateTask(cr, &cr.Status.LastTask) {
		src := cr.Spec.Source()
		cr.Status.Downloading = &src
	}
	wasUnderway := guest.TaskUnderway(cr.Status.LastTask)
	running, err := guest.RefreshTask(ctx, e.cl, e.record, cr, cr.Status.LastTask)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if running {
		return e.underway(cr), nil
	}
	if wasUnderway && cr.Status.LastTask.Type == taskDownload {
		e.downloadEnded(ctx, cr)
	}
	vol, found, err := e.cl.StorageVolume(ctx, cr.Spec.Node, volid, contentOf(volid))
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if !found {
		return e.absent(cr), nil
	}
	return e.present(ctx, cr, vol)
}

// underway reports a task of ours still running: the file exists for the
// reconciler (a second download must not start), Ready waits.
func (e *external) underway(cr *v1alpha1.StorageDownloadURL) managed.ExternalObservation {
	if cr.Status.LastTask.Type == taskDownload {
		cr.Status.State = v1alpha1.DownloadStateDownloading
		if cr.Status.Source == nil {
			cr.SetConditions(xpv2.Creating().WithObservedGeneration(cr.GetGeneration()))
		}
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}
}

// downloadEnded records the end of a download: what the file now holds, or
// the failure with PVE's reason and when the next attempt is due.
func (e *external) downloadEnded(ctx context.Context, cr *v1alpha1.StorageDownloadURL) {
	st := &cr.Status
	if !guest.LastTaskFailed(st.LastTask) {
		st.Source, st.Downloading = st.Downloading, nil
		st.Failures, st.RetryAfter = 0, nil
		return
	}
	st.Downloading = nil
	st.Failures++
	retry := metav1.NewTime(time.Now().Add(retryWait(e.retryBase, st.Failures)).Truncate(time.Second))
	st.RetryAfter = &retry
	st.State = v1alpha1.DownloadStateFailed
	msg := fmt.Sprintf("download failed %d time(s) in a row, next attempt at %s: %s",
		st.Failures, retry.UTC().Format(time.RFC3339), guest.TaskFailure(ctx, e.cl, st.LastTask))
	cr.SetConditions(notReady(ReasonDownloadFailed, msg, cr.GetGeneration()))
}

// retryWait is how long to wait after failures downloads failed in a row:
// base, doubled for each further failure, at most MaxRetryWait.
func retryWait(base time.Duration, failures int32) time.Duration {
	wait := base
	for i := int32(1); i < failures && wait < MaxRetryWait; i++ {
		wait *= 2
	}
	return min(wait, MaxRetryWait)
}

// waitingToRetry reports whether a failed download's next attempt is not
// due yet.
func waitingToRetry(cr *v1alpha1.StorageDownloadURL) bool {
	st := cr.Status
	return st.State == v1alpha1.DownloadStateFailed && st.RetryAfter != nil && time.Now().Before(st.RetryAfter.Time)
}

func notReady(reason xpv2.ConditionReason, msg string, gen int64) xpv2.Condition {
	return xpv2.Condition{
		Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: reason, Message: msg,
		LastTransitionTime: metav1.Now(), ObservedGeneration: gen,
	}
}

// absent reports no file: gone for a deletion, still there while a failed
// download waits for its retry (Ready says why), else to be downloaded.
func (e *external) absent(cr *v1alpha1.StorageDownloadURL) managed.ExternalObservation {
	cr.Status.Size, cr.Status.Format = 0, ""
	if !meta.WasDeleted(cr) && waitingToRetry(cr) {
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}
	}
	return managed.ExternalObservation{ResourceExists: false}
}

// present reports the stored file: adopted when it was not ours yet and
// matches the download, Ready, and up to date unless the spec now asks for
// another URL or checksum.
func (e *external) present(ctx context.Context, cr *v1alpha1.StorageDownloadURL, vol pve.Volume) (managed.ExternalObservation, error) {
	e.stored = vol
	st := &cr.Status
	st.Size, st.Format = vol.Size, vol.Format
	details := managed.ConnectionDetails{
		ConnectionDetailVolID: []byte(vol.VolID), guest.ConnectionDetailNode: []byte(cr.Spec.Node),
		ConnectionDetailStorage: []byte(cr.Spec.Storage),
	}
	if st.Source == nil && meta.WasDeleted(cr) {
		// Never ours (a conflicting file): deleting the resource leaves it.
		e.record.Event(cr, event.Normal(ReasonConflict, vol.VolID+" was not downloaded by this resource: it is left in Proxmox VE"))
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if st.Source == nil && !observeOnly(cr) {
		conflict, err := e.adopt(ctx, cr, vol)
		if err != nil {
			return managed.ExternalObservation{}, err
		}
		if conflict != "" {
			st.State = v1alpha1.DownloadStateConflict
			cr.SetConditions(notReady(ReasonFileConflict, conflict, cr.GetGeneration()))
			return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
		}
	}
	if waitingToRetry(cr) {
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ConnectionDetails: details}, nil
	}
	st.State = v1alpha1.DownloadStateAvailable
	cr.SetConditions(xpv2.Available().WithObservedGeneration(cr.GetGeneration()))
	upToDate := st.Source == nil || *st.Source == cr.Spec.Source()
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate, ConnectionDetails: details}, nil
}

// observeOnly reports whether the management policies only let the
// provider look (an import): such a file is taken as it is.
func observeOnly(cr *v1alpha1.StorageDownloadURL) bool {
	for _, a := range cr.GetManagementPolicies() {
		if a != xpv2.ManagementActionObserve && a != xpv2.ManagementActionLateInitialize {
			return false
		}
	}
	return true
}

// adopt takes a file the provider did not download as its own when its
// format and size are what the download would give, and returns why not
// otherwise. PVE keeps no checksum of a stored file, so size and format
// are all there is to compare; the size comes from the node's HEAD request
// for the URL. A decompressed download's size cannot be known beforehand.
func (e *external) adopt(ctx context.Context, cr *v1alpha1.StorageDownloadURL, vol pve.Volume) (string, error) {
	p := cr.Spec.DownloadParameters
	if want := expectedFormat(p.Content, p.Filename); vol.Format != want {
		return fmt.Sprintf("%s already exists with format %s, not the %s this download gives: it was left alone; remove it or use another filename", vol.VolID, vol.Format, want), nil
	}
	if p.Compression != "" {
		return fmt.Sprintf("%s already exists and the size of a decompressed download cannot be known beforehand: it was left alone; remove it or use another filename", vol.VolID), nil
	}
	size, err := e.cl.URLSize(ctx, p.Node, p.URL, p.VerifyCertificate)
	if err != nil {
		return "", err
	}
	if size != vol.Size {
		return fmt.Sprintf("%s already exists with %d bytes, but %s has %d: it was left alone; remove it or use another filename", vol.VolID, vol.Size, p.URL, size), nil
	}
	src := cr.Spec.Source()
	cr.Status.Source = &src
	e.record.Event(cr, event.Normal(guest.ReasonAdopted, fmt.Sprintf("adopted %s: its size (%d bytes) and format (%s) are what the download gives", vol.VolID, vol.Size, vol.Format)))
	return "", nil
}

// expectedFormat is the format pve-storage reports for a file of content
// type content named filename.
func expectedFormat(content, filename string) string {
	lower := strings.ToLower(filename)
	switch content {
	case v1alpha1.ContentISO:
		return "iso"
	case v1alpha1.ContentVZTmpl:
		for suffix, format := range map[string]string{".tar.gz": "tgz", ".tar.xz": "txz", ".tar.bz2": "tbz2", ".tar.zst": "tzst"} {
			if strings.HasSuffix(lower, suffix) {
				return format
			}
		}
		return "tar"
	default:
		return lower[strings.LastIndex(lower, ".")+1:]
	}
}
