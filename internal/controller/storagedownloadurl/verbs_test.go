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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	testNode = "lowtower"
	isoURL   = "https://cdimage.example/debian-12.iso"
	isoVolID = "local:iso/debian-12.iso"
)

// fixture is a simulator, a client of it and the events recorded.
type fixture struct {
	sim *pvesim.Server
	cl  *pve.Client
	log *guesttest.EventLog
}

func newFixture(t *testing.T, opts pvesim.Options) *fixture {
	t.Helper()
	sim, cl := guesttest.Simulator(t, opts, testNode)
	return &fixture{sim: sim, cl: cl, log: &guesttest.EventLog{}}
}

// slowDownloads makes download tasks run long enough to be seen running.
var slowDownloads = pvesim.Options{TaskDurations: map[string]time.Duration{"download": time.Hour}}

func (f *fixture) external() *external {
	return &external{cl: f.cl, record: f.log, retryBase: time.Minute}
}

func isoDownload(name string) *v1alpha1.StorageDownloadURL {
	return &v1alpha1.StorageDownloadURL{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: v1alpha1.StorageDownloadURLSpec{
			ResourceSpec: v1alpha1.ResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}},
			DownloadParameters: v1alpha1.DownloadParameters{
				Content: "iso", Filename: "debian-12.iso", Node: testNode, Storage: "local", URL: isoURL,
			},
		},
	}
}

// created runs Create on cr as the reconciler would after an Observe that
// found nothing.
func created(t *testing.T, f *fixture, cr *v1alpha1.StorageDownloadURL) *v1alpha1.StorageDownloadURL {
	t.Helper()
	if _, err := f.external().Create(context.Background(), cr); err != nil {
		t.Fatalf("Create: %v", err)
	}
	return cr
}

// observed runs Observe once more, as the next reconcile would.
func observed(t *testing.T, f *fixture, cr *v1alpha1.StorageDownloadURL) *v1alpha1.StorageDownloadURL {
	t.Helper()
	if _, err := f.external().Observe(context.Background(), cr); err != nil {
		t.Fatalf("Observe: %v", err)
	}
	return cr
}

func failDownloads(f *fixture, message string) {
	f.sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{
		Method: "POST", PathPattern: "/nodes/*/storage/*/download-url", TaskFailureRate: 1, TaskFailureMessage: message,
	}}})
}

// downloadRequests counts the download-url requests the simulator answered.
func downloadRequests(f *fixture) int {
	n := 0
	for endpoint, count := range f.sim.Counters().ByEndpoint {
		if strings.HasSuffix(endpoint, "/download-url") {
			n += count
		}
	}
	return n
}

// observation is what Observe's answer and the status must say.
type observation struct {
	Exists, UpToDate bool
	State            string
	Ready            corev1.ConditionStatus
	Reason           xpv2.ConditionReason
	Source           *v1alpha1.DownloadSource
	Failures         int32
}

func observationOf(o managed.ExternalObservation, cr *v1alpha1.StorageDownloadURL) observation {
	c := cr.GetCondition(xpv2.TypeReady)
	return observation{
		Exists: o.ResourceExists, UpToDate: o.ResourceUpToDate, State: cr.Status.State,
		Ready: c.Status, Reason: c.Reason, Source: cr.Status.Source, Failures: cr.Status.Failures,
	}
}

func TestObserve(t *testing.T) {
	iso := &v1alpha1.DownloadSource{URL: isoURL}
	cases := map[string]struct {
		reason string
		opts   pvesim.Options
		setup  func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL
		want   observation
		// readyMsg is a substring of Ready's message; events must be
		// recorded.
		readyMsg string
		events   []string
		check    func(t *testing.T, f *fixture, cr *v1alpha1.StorageDownloadURL, o managed.ExternalObservation)
	}{
		"NothingYet": {
			reason: "No file and no task: the file is to be downloaded.",
			setup:  func(*testing.T, *fixture) *v1alpha1.StorageDownloadURL { return isoDownload("nothing") },
			want:   observation{Ready: corev1.ConditionUnknown},
		},
		"DownloadRunning": {
			reason: "The download Create started is followed: the file exists for the reconciler, Ready waits.",
			opts:   slowDownloads,
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				return created(t, f, isoDownload("running"))
			},
			want: observation{Exists: true, UpToDate: true, State: "downloading", Ready: corev1.ConditionFalse, Reason: xpv2.ReasonCreating},
			check: func(t *testing.T, _ *fixture, cr *v1alpha1.StorageDownloadURL, _ managed.ExternalObservation) {
				if lt := cr.Status.LastTask; lt == nil || lt.Type != "download" || lt.Status != guest.TaskRunning {
					t.Errorf("lastTask = %+v, want the running download", lt)
				}
			},
		},
		"Downloaded": {
			reason: "A finished download is Ready with its volid, size, format and source, and publishes connection details.",
			setup:  func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL { return created(t, f, isoDownload("done")) },
			want:   observation{Exists: true, UpToDate: true, State: "available", Ready: corev1.ConditionTrue, Reason: xpv2.ReasonAvailable, Source: iso},
			check: func(t *testing.T, _ *fixture, cr *v1alpha1.StorageDownloadURL, o managed.ExternalObservation) {
				got := []any{cr.Status.VolID, cr.Status.Size, cr.Status.Format, string(o.ConnectionDetails["volid"])}
				want := []any{isoVolID, pvesim.DownloadSize(isoURL), "iso", isoVolID}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("volid, size, format, detail (-want +got):\n%s", diff)
				}
			},
		},
		"DownloadFailed": {
			reason: "A failed download is a condition with PVE's message from the task, counted, and waits for its retry.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				failDownloads(f, "checksum mismatch: got 'abc' != expect 'def'")
				return created(t, f, isoDownload("failed"))
			},
			want:     observation{Exists: true, UpToDate: true, State: "failed", Ready: corev1.ConditionFalse, Reason: ReasonDownloadFailed, Failures: 1},
			readyMsg: "checksum mismatch: got 'abc' != expect 'def'",
			events:   []string{string(guest.ReasonTaskFailed)},
			check: func(t *testing.T, _ *fixture, cr *v1alpha1.StorageDownloadURL, _ managed.ExternalObservation) {
				if ra := cr.Status.RetryAfter; ra == nil || time.Until(ra.Time) < 30*time.Second {
					t.Errorf("retryAfter = %v, want about a minute ahead", ra)
				}
			},
		},
		"RetryDue": {
			reason: "Once the wait after a failure has passed, the file is to be downloaded again.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				failDownloads(f, "download failed: 503 Service Unavailable")
				cr := observed(t, f, created(t, f, isoDownload("due")))
				past := metav1.NewTime(time.Now().Add(-time.Second))
				cr.Status.RetryAfter = &past
				return cr
			},
			want: observation{State: "failed", Ready: corev1.ConditionFalse, Reason: ReasonDownloadFailed, Failures: 1},
		},
		"SecondFailureWaitsLonger": {
			reason: "Each failure in a row doubles the wait before the next attempt.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				failDownloads(f, "download failed: 503 Service Unavailable")
				cr := observed(t, f, created(t, f, isoDownload("twice")))
				past := metav1.NewTime(time.Now().Add(-time.Second))
				cr.Status.RetryAfter = &past
				return created(t, f, observed(t, f, cr))
			},
			want:     observation{Exists: true, UpToDate: true, State: "failed", Ready: corev1.ConditionFalse, Reason: ReasonDownloadFailed, Failures: 2},
			readyMsg: "2 time(s) in a row",
			check: func(t *testing.T, _ *fixture, cr *v1alpha1.StorageDownloadURL, _ managed.ExternalObservation) {
				if ra := cr.Status.RetryAfter; ra == nil || time.Until(ra.Time) < 90*time.Second {
					t.Errorf("retryAfter = %v, want about two minutes ahead", ra)
				}
			},
		},
		"URLChanged": {
			reason: "A changed url makes the stored file out of date: Update downloads again.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				cr := observed(t, f, created(t, f, isoDownload("changed")))
				cr.Spec.URL = "https://mirror.example/debian-12.iso"
				return cr
			},
			want: observation{Exists: true, State: "available", Ready: corev1.ConditionTrue, Reason: xpv2.ReasonAvailable, Source: iso},
		},
		"ChecksumChanged": {
			reason: "A changed checksum makes the stored file out of date as well.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				cr := observed(t, f, created(t, f, isoDownload("checksum")))
				cr.Spec.Checksum, cr.Spec.ChecksumAlgorithm = "0123abcd", "sha256"
				return cr
			},
			want: observation{Exists: true, State: "available", Ready: corev1.ConditionTrue, Reason: xpv2.ReasonAvailable, Source: iso},
		},
		"AdoptedWhenSizeAndFormatMatch": {
			reason: "A file already there with the size and format the download gives is adopted.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				if err := f.sim.AddFile(testNode, isoVolID, pvesim.DownloadSize(isoURL)); err != nil {
					t.Fatal(err)
				}
				return isoDownload("adopt")
			},
			want:   observation{Exists: true, UpToDate: true, State: "available", Ready: corev1.ConditionTrue, Reason: xpv2.ReasonAvailable, Source: iso},
			events: []string{string(guest.ReasonAdopted)},
		},
		"ConflictWhenSizeDiffers": {
			reason: "A file already there with another size is left alone and reported, never overwritten.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				if err := f.sim.AddFile(testNode, isoVolID, 12345); err != nil {
					t.Fatal(err)
				}
				return isoDownload("conflict")
			},
			want:     observation{Exists: true, UpToDate: true, State: "conflict", Ready: corev1.ConditionFalse, Reason: ReasonFileConflict},
			readyMsg: fmt.Sprintf("%s already exists with 12345 bytes, but %s has %d", isoVolID, isoURL, pvesim.DownloadSize(isoURL)),
			check: func(t *testing.T, f *fixture, _ *v1alpha1.StorageDownloadURL, _ managed.ExternalObservation) {
				if n := downloadRequests(f); n != 0 {
					t.Errorf("%d download-url requests, want none: PVE would fail the task on the file there", n)
				}
			},
		},
		"FileAppearedBeforeTheDownload": {
			reason: "A file that appeared between Observe and Create fails PVE's download task (refusing to override existing file); " +
				"Observe then reports the conflict with the file and both sizes, and the file exists for the reconciler: no further download.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				if err := f.sim.AddFile(testNode, isoVolID, 12345); err != nil {
					t.Fatal(err)
				}
				return created(t, f, isoDownload("race"))
			},
			want:     observation{Exists: true, UpToDate: true, State: "conflict", Ready: corev1.ConditionFalse, Reason: ReasonFileConflict, Failures: 1},
			readyMsg: fmt.Sprintf("%s already exists with 12345 bytes, but %s has %d", isoVolID, isoURL, pvesim.DownloadSize(isoURL)),
			events:   []string{string(guest.ReasonTaskFailed)},
			check: func(t *testing.T, f *fixture, cr *v1alpha1.StorageDownloadURL, _ managed.ExternalObservation) {
				if lt := cr.Status.LastTask; lt == nil || !strings.Contains(lt.ExitStatus, "refusing to override existing file '/var/lib/vz/template/iso/debian-12.iso'") {
					t.Errorf("lastTask %+v, want PVE's refusal to override the file", lt)
				}
				if vol, _, err := f.cl.StorageVolume(context.Background(), testNode, isoVolID, "iso"); err != nil || vol.Size != 12345 {
					t.Errorf("file %+v %v, want it untouched", vol, err)
				}
				if n := downloadRequests(f); n != 1 {
					t.Errorf("%d download-url requests, want the one Create sent", n)
				}
			},
		},
		"DecompressionRefusedInTheTask": {
			reason: "PVE judges compression inside the download task: its reason reaches Ready.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				cr := isoDownload("decompress")
				cr.Spec.Content, cr.Spec.Filename, cr.Spec.Compression = "vztmpl", "alpine.tar.gz", "gz"
				cr.Spec.URL = "https://images.example/alpine.tar.gz"
				return created(t, f, cr)
			},
			want:     observation{Exists: true, UpToDate: true, State: "failed", Ready: corev1.ConditionFalse, Reason: ReasonDownloadFailed, Failures: 1},
			readyMsg: "decompression not supported for vztmpl",
		},
		"ConflictWhenDecompressed": {
			reason: "The size of a decompressed download cannot be known beforehand: no adoption.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				if err := f.sim.AddFile(testNode, isoVolID, pvesim.DownloadSize(isoURL)); err != nil {
					t.Fatal(err)
				}
				cr := isoDownload("zst")
				cr.Spec.Compression = "zst"
				return cr
			},
			want:     observation{Exists: true, UpToDate: true, State: "conflict", Ready: corev1.ConditionFalse, Reason: ReasonFileConflict},
			readyMsg: "decompressed",
		},
		"ImportObserveOnly": {
			reason: "An Observe-only import takes the file named by the external name as it is.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				if err := f.sim.AddFile(testNode, "local:iso/other.iso", 777); err != nil {
					t.Fatal(err)
				}
				cr := isoDownload("import")
				cr.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
				meta.SetExternalName(cr, "local:iso/other.iso")
				return cr
			},
			want: observation{Exists: true, UpToDate: true, State: "available", Ready: corev1.ConditionTrue, Reason: xpv2.ReasonAvailable},
			check: func(t *testing.T, _ *fixture, cr *v1alpha1.StorageDownloadURL, _ managed.ExternalObservation) {
				if cr.Status.VolID != "local:iso/other.iso" || cr.Status.Size != 777 {
					t.Errorf("status volid %q size %d, want the imported file", cr.Status.VolID, cr.Status.Size)
				}
			},
		},
		"DeletingProtected": {
			reason: "With deletionProtection a deleted resource is reported gone and the file kept.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				cr := observed(t, f, created(t, f, isoDownload("protected")))
				cr.Spec.DeletionProtection = true
				now := metav1.Now()
				cr.SetDeletionTimestamp(&now)
				return cr
			},
			want:   observation{State: "available", Ready: corev1.ConditionTrue, Reason: xpv2.ReasonAvailable, Source: iso},
			events: []string{string(guest.ReasonDeletionProtection)},
			check: func(t *testing.T, f *fixture, _ *v1alpha1.StorageDownloadURL, _ managed.ExternalObservation) {
				if !f.sim.HasVolume(testNode, isoVolID) {
					t.Error("a protected file was removed")
				}
			},
		},
		"DeletingAConflictingFile": {
			reason: "A file this resource did not download is not removed when the resource is deleted.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				if err := f.sim.AddFile(testNode, isoVolID, 12345); err != nil {
					t.Fatal(err)
				}
				cr := observed(t, f, isoDownload("foreign"))
				now := metav1.Now()
				cr.SetDeletionTimestamp(&now)
				return cr
			},
			want:   observation{State: "conflict", Ready: corev1.ConditionFalse, Reason: ReasonFileConflict},
			events: []string{string(ReasonConflict)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.opts)
			cr := tc.setup(t, f)
			o, err := f.external().Observe(context.Background(), cr)
			if err != nil {
				t.Fatalf("%s\nObserve: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, observationOf(o, cr)); diff != "" {
				t.Errorf("%s\nObserve (-want +got):\n%s", tc.reason, diff)
			}
			if msg := cr.GetCondition(xpv2.TypeReady).Message; !strings.Contains(msg, tc.readyMsg) {
				t.Errorf("%s\nReady message %q, want it to contain %q", tc.reason, msg, tc.readyMsg)
			}
			for _, r := range tc.events {
				if !f.log.Has(r) {
					t.Errorf("%s\nno %s event; events: %v", tc.reason, r, f.log.Reasons())
				}
			}
			if tc.check != nil {
				tc.check(t, f, cr, o)
			}
		})
	}
}

// verbWant is what Create, Update or Delete must leave behind.
type verbWant struct {
	// err is a substring of the returned error; "" means none.
	err    string
	events []string
	// volume: whether the file is in the storage afterwards (after the
	// task ran).
	volume bool
	check  func(t *testing.T, f *fixture, cr *v1alpha1.StorageDownloadURL)
}

func (w verbWant) verify(t *testing.T, reason string, f *fixture, cr *v1alpha1.StorageDownloadURL, err error) {
	t.Helper()
	switch {
	case w.err == "" && err != nil:
		t.Errorf("%s\nerror = %v, want none", reason, err)
	case w.err != "" && (err == nil || !strings.Contains(err.Error(), w.err)):
		t.Errorf("%s\nerror = %v, want one containing %q", reason, err, w.err)
	}
	for _, r := range w.events {
		if !f.log.Has(r) {
			t.Errorf("%s\nno %s event; events: %v", reason, r, f.log.Reasons())
		}
	}
	if got := f.sim.HasVolume(testNode, cr.Spec.VolID()); got != w.volume {
		t.Errorf("%s\nfile in the storage = %v, want %v", reason, got, w.volume)
	}
	if w.check != nil {
		w.check(t, f, cr)
	}
}

func TestCreate(t *testing.T) {
	cases := map[string]struct {
		reason string
		cr     func() *v1alpha1.StorageDownloadURL
		want   verbWant
	}{
		"StartsTheDownload": {
			reason: "Create names the volume, starts PVE's download and records its task in the create-task annotation.",
			cr:     func() *v1alpha1.StorageDownloadURL { return isoDownload("start") },
			want: verbWant{events: []string{string(ReasonDownloading)}, volume: true, check: func(t *testing.T, _ *fixture, cr *v1alpha1.StorageDownloadURL) {
				if got := meta.GetExternalName(cr); got != isoVolID {
					t.Errorf("external name %q, want %q", got, isoVolID)
				}
				if u, err := pve.ParseUPID(cr.GetAnnotations()[guest.AnnotationCreateTask]); err != nil || u.Type != "download" {
					t.Errorf("create-task annotation: %v %+v", err, u)
				}
			}},
		},
		"ImportContent": {
			reason: "A disk image for import-from goes to the import content type.",
			cr: func() *v1alpha1.StorageDownloadURL {
				cr := isoDownload("import")
				cr.Spec.Content, cr.Spec.Filename, cr.Spec.URL = "import", "debian-12.qcow2", "https://cloud.example/debian-12.qcow2"
				return cr
			},
			want: verbWant{volume: true},
		},
		"WrongExtensionRefused": {
			reason: "PVE's refusal before any task (an ISO named .qcow2) is returned with its message.",
			cr: func() *v1alpha1.StorageDownloadURL {
				cr := isoDownload("ext")
				cr.Spec.Filename = "debian-12.qcow2"
				return cr
			},
			want: verbWant{err: "wrong file extension"},
		},
		"StorageWithoutTheContentType": {
			reason: "A storage not configured for the content type is PVE's refusal.",
			cr: func() *v1alpha1.StorageDownloadURL {
				cr := isoDownload("lvm")
				cr.Spec.Storage = "local-lvm"
				return cr
			},
			want: verbWant{err: "not a file based storage"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			cr := tc.cr()
			_, err := f.external().Create(context.Background(), cr)
			tc.want.verify(t, tc.reason, f, cr, err)
		})
	}
}

func TestDelete(t *testing.T) {
	cases := map[string]struct {
		reason string
		opts   pvesim.Options
		setup  func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL
		want   verbWant
	}{
		"RemovesTheFile": {
			reason: "Delete removes the downloaded file with PVE's imgdel task.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				return observed(t, f, created(t, f, isoDownload("rm")))
			},
			want: verbWant{events: []string{string(guest.ReasonDeleting)}, check: func(t *testing.T, _ *fixture, cr *v1alpha1.StorageDownloadURL) {
				if lt := cr.Status.LastTask; lt == nil || lt.Type != "imgdel" {
					t.Errorf("lastTask %+v, want the imgdel task", lt)
				}
			}},
		},
		"WaitsForTheDownload": {
			reason: "While the download runs nothing is removed: a download ending later would bring the file back.",
			opts:   slowDownloads,
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				return observed(t, f, created(t, f, isoDownload("wait")))
			},
			want: verbWant{check: func(t *testing.T, _ *fixture, cr *v1alpha1.StorageDownloadURL) {
				if lt := cr.Status.LastTask; lt == nil || lt.Type != "download" {
					t.Errorf("lastTask %+v, want the download still", lt)
				}
			}},
		},
		"ProtectedVolumeRefused": {
			reason: "A volume PVE protects is not removed: the refusal from the imgdel task is returned with PVE's message.",
			setup: func(t *testing.T, f *fixture) *v1alpha1.StorageDownloadURL {
				cr := observed(t, f, created(t, f, isoDownload("pveprotected")))
				if err := f.sim.ProtectVolume(testNode, isoVolID, true); err != nil {
					t.Fatal(err)
				}
				if _, err := f.external().Delete(context.Background(), cr); err != nil {
					t.Fatalf("first Delete: %v", err)
				}
				return observed(t, f, cr)
			},
			want: verbWant{err: "cannot remove protected volume 'iso/debian-12.iso' on 'local'", volume: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.opts)
			cr := tc.setup(t, f)
			_, err := f.external().Delete(context.Background(), cr)
			tc.want.verify(t, tc.reason, f, cr, err)
		})
	}
}

func TestRetryWaitDoublesUpToTheCap(t *testing.T) {
	cases := map[string]struct {
		failures int32
		want     time.Duration
	}{
		"first":  {1, 30 * time.Second},
		"second": {2, time.Minute},
		"fifth":  {5, 8 * time.Minute},
		"capped": {40, MaxRetryWait},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := retryWait(DefaultRetryBase, tc.failures); got != tc.want {
				t.Errorf("retryWait(%d) = %s, want %s", tc.failures, got, tc.want)
			}
		})
	}
}
