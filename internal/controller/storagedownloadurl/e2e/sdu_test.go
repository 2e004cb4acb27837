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

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/storagedownloadurl"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Every StorageDownloadURL example applies and becomes Ready.
func TestExamplesBecomeReady(t *testing.T) {
	require(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "storagedownloadurl", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(raw, &u.Object); err != nil {
				t.Fatal(err)
			}
			ns := h.Namespace(t, "sdu-example-")
			u.SetNamespace(ns)
			create(t, u)
			cr := &v1alpha1.StorageDownloadURL{}
			cr.SetNamespace(ns)
			cr.SetName(u.GetName())
			waitReady(t, cr)
			if !h.Sim.HasVolume(node, cr.Spec.VolID()) || cr.Status.VolID != cr.Spec.VolID() || cr.Status.Size == 0 {
				t.Errorf("status %+v; file %s in the storage: %v", cr.Status, cr.Spec.VolID(), h.Sim.HasVolume(node, cr.Spec.VolID()))
			}
			remove(t, cr)
			if kept := h.Sim.HasVolume(node, cr.Spec.VolID()); kept != cr.Spec.DeletionProtection {
				t.Errorf("file kept after delete = %v, want %v (deletionProtection)", kept, cr.Spec.DeletionProtection)
			}
		})
	}
}

// A download is followed to its end; the file, its size and the
// connection details appear; a changed url downloads again; deleting the
// resource removes the file.
func TestDownloadRedownloadAndDelete(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "sdu-")
	cr := download(ns)
	cr.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "iso-conn"}
	create(t, cr)
	waitEvent(t, ns, cr.Name, string(storagedownloadurl.ReasonDownloading))
	waitReady(t, cr)
	if got, want := cr.Status.Size, pvesim.DownloadSize(cr.Spec.URL); got != want || cr.Status.State != v1alpha1.DownloadStateAvailable {
		t.Errorf("status size %d state %q, want %d available", got, cr.Status.State, want)
	}
	if meta.GetExternalName(cr) != cr.Spec.VolID() {
		t.Errorf("external name %q, want the volid %q", meta.GetExternalName(cr), cr.Spec.VolID())
	}
	conn := &corev1.Secret{}
	conn.SetNamespace(ns)
	conn.SetName("iso-conn")
	h.WaitFor(t, conn, "written", wait, func() bool { return string(conn.Data["volid"]) == cr.Spec.VolID() })

	cr.Spec.URL = "https://mirror.example/" + ns + "-v2.iso"
	if err := h.Kube.Update(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, cr, "downloaded again from the new url", wait, func() bool {
		return ready(cr) && cr.Status.Source != nil && cr.Status.Source.URL == cr.Spec.URL &&
			cr.Status.Size == pvesim.DownloadSize(cr.Spec.URL)
	})
	remove(t, cr)
	if h.Sim.HasVolume(node, cr.Spec.VolID()) {
		t.Error("the file survived the deletion")
	}
}

// A failed download is a condition with PVE's message and is retried after
// a wait; once PVE succeeds the resource becomes Ready.
func TestFailedDownloadRetried(t *testing.T) {
	require(t)
	const msg = "checksum mismatch: got 'aaaa' != expect 'bbbb'"
	h.Sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{
		Method: "POST", PathPattern: "/nodes/*/storage/*/download-url", TaskFailureRate: 1, TaskFailureMessage: msg,
	}}})
	t.Cleanup(func() { h.Sim.SetFaults(pvesim.Faults{}) })
	ns := h.Namespace(t, "sdu-retry-")
	cr := download(ns)
	create(t, cr)
	h.WaitFor(t, cr, "failed with PVE's message", wait, func() bool {
		c := cr.GetCondition(xpv2.TypeReady)
		return c.Reason == storagedownloadurl.ReasonDownloadFailed && strings.Contains(c.Message, msg)
	})
	if cr.Status.Failures != 1 || cr.Status.RetryAfter == nil || cr.Status.State != v1alpha1.DownloadStateFailed {
		t.Errorf("status failures %d retryAfter %v state %q, want 1, set, failed", cr.Status.Failures, cr.Status.RetryAfter, cr.Status.State)
	}
	retryAt := cr.Status.RetryAfter.Time
	h.Sim.SetFaults(pvesim.Faults{})
	h.WaitFor(t, cr, "Ready after the retry", wait, func() bool { return ready(cr) })
	if now := time.Now(); now.Before(retryAt) {
		t.Errorf("Ready at %s, before the retry was due (%s)", now, retryAt)
	}
	if cr.Status.Failures != 0 || cr.Status.RetryAfter != nil {
		t.Errorf("after success: failures %d retryAfter %v, want both cleared", cr.Status.Failures, cr.Status.RetryAfter)
	}
	remove(t, cr)
}

// A file already in the storage is adopted when its size and format are
// what the download gives, and left alone (a condition) otherwise.
func TestExistingFileAdoptedOrLeftAlone(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "sdu-adopt-")
	same := download(ns)
	if err := h.Sim.AddFile(node, same.Spec.VolID(), pvesim.DownloadSize(same.Spec.URL)); err != nil {
		t.Fatal(err)
	}
	create(t, same)
	waitReady(t, same)
	waitEvent(t, ns, same.Name, "Adopted")
	remove(t, same)

	other := download(ns)
	other.SetName("other")
	other.Spec.Filename = ns + "-other.iso"
	if err := h.Sim.AddFile(node, other.Spec.VolID(), 4096); err != nil {
		t.Fatal(err)
	}
	create(t, other)
	h.WaitFor(t, other, "in conflict", wait, func() bool {
		return other.GetCondition(xpv2.TypeReady).Reason == storagedownloadurl.ReasonFileConflict
	})
	wantMsg := fmt.Sprintf("%s already exists with 4096 bytes, but %s has %d", other.Spec.VolID(), other.Spec.URL, pvesim.DownloadSize(other.Spec.URL))
	if msg := other.GetCondition(xpv2.TypeReady).Message; !strings.Contains(msg, wantMsg) {
		t.Errorf("conflict message %q, want it to name the file and both sizes (%q)", msg, wantMsg)
	}
	remove(t, other)
	if !h.Sim.HasVolume(node, other.Spec.VolID()) {
		t.Error("a file the resource did not download was removed")
	}
}

// deletionProtection keeps the file; an Observe-only import reads it
// without changing or removing it.
func TestDeletionProtectionAndImport(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "sdu-keep-")
	kept := download(ns)
	kept.Spec.DeletionProtection = true
	create(t, kept)
	waitReady(t, kept)
	remove(t, kept)
	waitEvent(t, ns, kept.Name, "DeletionProtection")
	if !h.Sim.HasVolume(node, kept.Spec.VolID()) {
		t.Fatal("a protected file was removed")
	}

	imported := download(ns)
	imported.SetName("imported")
	imported.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	imported.Spec.URL = "https://elsewhere.example/other.iso"
	meta.SetExternalName(imported, kept.Spec.VolID())
	create(t, imported)
	waitReady(t, imported)
	if imported.Status.VolID != kept.Spec.VolID() || imported.Status.Size != pvesim.DownloadSize(kept.Spec.URL) {
		t.Errorf("imported status %+v", imported.Status)
	}
	remove(t, imported)
	if !h.Sim.HasVolume(node, kept.Spec.VolID()) {
		t.Error("an Observe-only import removed the file")
	}
}
