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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/virtualmachinetemplate"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// On a storage without import content, a root@pam password connection
// downloads the image as iso and imports the disk from its file path; the
// template becomes Ready and an event says so.
func TestNoImportContentAsRootImportsFromThePath(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "vmt-path-")
	cr := template(ns)
	cr.Spec.ConnectionRef.Name = rootConnName
	cr.Spec.ImageConfig.Storage = noImport
	create(t, cr)
	h.WaitFor(t, cr, "Ready", wait, func() bool { return providertest.ReadyAndSynced(cr) })
	sdu := &v1alpha1.StorageDownloadURL{}
	sdu.SetNamespace(ns)
	sdu.SetName("tmpl-image")
	h.WaitFor(t, sdu, "Ready", wait, func() bool { return providertest.ReadyAndSynced(sdu) })
	if sdu.Spec.VolID() != noImport+":iso/"+ns+".img" {
		t.Errorf("image downloaded as %s, want %s:iso/%s.img", sdu.Spec.VolID(), noImport, ns)
	}
	if !hasEvent(t, ns, cr.Name, string(virtualmachinetemplate.ReasonImageFromPath)) {
		t.Error("no event says the disk is imported from the image's path")
	}
	if g, ok := guestNamed(ns); !ok || !g.Template || !strings.Contains(g.Config["scsi0"], "size=") {
		t.Errorf("template VM %+v (found %v): want a template with its disk imported", g.Config, ok)
	}
	remove(t, cr)
	h.WaitGone(t, cr, wait)
}

// With a token (which may not import a path) the build stops at the image
// step with a message saying what is needed, and downloads nothing.
func TestNoImportContentWithATokenSaysWhatIsNeeded(t *testing.T) {
	require(t)
	ns := h.Namespace(t, "vmt-noimport-")
	cr := template(ns)
	cr.Spec.ImageConfig.Storage = noImport
	create(t, cr)
	h.WaitFor(t, cr, "Synced False naming the fix", wait, func() bool {
		c := cr.GetCondition(xpv2.TypeSynced)
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "has no import content") &&
			strings.Contains(c.Message, "root@pam")
	})
	sdu := &v1alpha1.StorageDownloadURL{}
	sdu.SetNamespace(ns)
	sdu.SetName("tmpl-image")
	if err := h.Kube.Get(t.Context(), client.ObjectKeyFromObject(sdu), sdu); !kerrors.IsNotFound(err) {
		t.Errorf("StorageDownloadURL lookup: %v, want none made", err)
	}
	remove(t, cr)
	h.WaitGone(t, cr, wait)
}
