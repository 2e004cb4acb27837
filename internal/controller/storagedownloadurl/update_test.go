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
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// PVE's download never replaces a file (pve-common download_file_from_url),
// so a changed url removes the file first and downloads it anew: no
// download task fails on the file already there.
func TestUpdateReplacesTheFile(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, pvesim.Options{})
	cr := observed(t, f, created(t, f, isoDownload("again")))
	cr.Spec.URL = "https://mirror.example/debian-12-new.iso"
	if _, err := f.external().Update(ctx, cr); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if lt := cr.Status.LastTask; lt == nil || lt.Type != taskDelete || !f.log.Has(string(ReasonReplacing)) {
		t.Fatalf("after Update: lastTask %+v, events %v; want the imgdel task and a Replacing event", lt, f.log.Reasons())
	}
	o, err := f.external().Observe(ctx, cr)
	if err != nil || o.ResourceExists {
		t.Fatalf("after the removal: %+v %v, want the file gone so Create downloads it", o, err)
	}
	cr = observed(t, f, created(t, f, cr))
	want := &v1alpha1.DownloadSource{URL: cr.Spec.URL}
	if diff := cmp.Diff(want, cr.Status.Source); diff != "" {
		t.Errorf("status.source (-want +got):\n%s", diff)
	}
	if cr.Status.Size != pvesim.DownloadSize(cr.Spec.URL) || cr.Status.Failures != 0 || f.log.Has(string(guest.ReasonTaskFailed)) {
		t.Errorf("size %d (want the new download's %d), failures %d, events %v: want no failed task",
			cr.Status.Size, pvesim.DownloadSize(cr.Spec.URL), cr.Status.Failures, f.log.Reasons())
	}
}

// A protected file cannot be removed, so it cannot be replaced: Update says
// so before starting a task PVE would fail.
func TestUpdateRefusesAProtectedFile(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	cr := observed(t, f, created(t, f, isoDownload("protected")))
	if err := f.sim.ProtectVolume(testNode, isoVolID, true); err != nil {
		t.Fatal(err)
	}
	cr.Spec.URL = "https://mirror.example/debian-12-new.iso"
	e := f.external()
	if o, err := e.Observe(context.Background(), cr); err != nil || o.ResourceUpToDate {
		t.Fatalf("Observe: %+v %v, want the file out of date", o, err)
	}
	_, err := e.Update(context.Background(), cr)
	if err == nil || !strings.Contains(err.Error(), isoVolID+" is protected in Proxmox VE") {
		t.Errorf("Update: %v, want the protection named", err)
	}
	if lt := cr.Status.LastTask; lt == nil || lt.Type != taskDownload {
		t.Errorf("lastTask %+v, want still the download: no removal started", lt)
	}
}
