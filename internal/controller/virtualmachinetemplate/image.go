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
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// Events of the image step.
const (
	// ReasonImageConverted says an iso imageConfig is downloaded as import
	// content.
	ReasonImageConverted event.Reason = "ImageContentConverted"
	// ReasonImageFromPath says the image's storage has no import content,
	// so the image is downloaded as iso content and imported from its
	// filesystem path, which Proxmox VE allows root@pam alone.
	ReasonImageFromPath event.Reason = "ImageImportedFromPath"
)

// imageName is the name of the template's StorageDownloadURL.
func imageName(cr *v1alpha1.VirtualMachineTemplate) string { return cr.Name + "-image" }

// importExtensions are the file name endings import content takes in a
// download (pve-storage's $UPLOAD_IMPORT_EXT_RE_1, which download-url
// checks for content import).
var importExtensions = []string{".qcow2", ".raw", ".vmdk", ".ova"}

// importParameters are the download the template imports its disk from:
// imageConfig, with an iso download turned into import content where
// import takes the file (import-from refuses an iso volume): a .img name
// becomes .qcow2 (cloud images named .img are qcow2 files), a name import
// content takes stays. An iso whose name import content refuses (a disk
// image shipped as .iso, as Talos's) or which Proxmox VE is to decompress
// (compression applies to iso downloads only) stays iso content: its disk
// is imported from the file's path (see viaPath). converted reports
// whether anything was changed.
func importParameters(cr *v1alpha1.VirtualMachineTemplate) (p v1alpha1.DownloadParameters, converted bool) {
	p = cr.Spec.ImageConfig
	if p.Content != v1alpha1.ContentISO {
		return p, false
	}
	if !importable(p) {
		return isoNamed(p)
	}
	p.Content = v1alpha1.ContentImport
	if base, ok := strings.CutSuffix(p.Filename, ".img"); ok {
		p.Filename = base + ".qcow2"
	}
	return p, true
}

// isoNamed returns iso download p named as iso content must be: a name
// ending in neither .iso nor .img (pve-storage's $ISO_EXT_RE_0, any case)
// gets .img appended (PVE finds the disk format in the file itself when it
// imports from a path). renamed reports whether it did.
func isoNamed(p v1alpha1.DownloadParameters) (_ v1alpha1.DownloadParameters, renamed bool) {
	ext := strings.ToLower(path.Ext(p.Filename))
	if ext == ".iso" || ext == ".img" {
		return p, false
	}
	p.Filename += ".img"
	return p, true
}

// importable reports whether iso download p may be made as import content
// instead.
func importable(p v1alpha1.DownloadParameters) bool {
	if p.Compression != "" {
		return false
	}
	return strings.HasSuffix(p.Filename, ".img") || slices.ContainsFunc(importExtensions, func(ext string) bool { return strings.HasSuffix(p.Filename, ext) })
}

// fromPath turns p, an import download to a storage without import
// content, into an iso download of the same file, named as iso content
// must be (.iso or .img; PVE finds the disk format in the file itself when
// it imports from a path).
func fromPath(cr *v1alpha1.VirtualMachineTemplate, p v1alpha1.DownloadParameters) v1alpha1.DownloadParameters {
	if cr.Spec.ImageConfig.Content == v1alpha1.ContentISO {
		return cr.Spec.ImageConfig
	}
	p.Content = v1alpha1.ContentISO
	if !strings.HasSuffix(p.Filename, ".img") && !strings.HasSuffix(p.Filename, ".iso") {
		p.Filename = strings.TrimSuffix(p.Filename, path.Ext(p.Filename)) + ".img"
	}
	return p
}

// downloadFor returns the download to make for p: p itself when it is
// import content and its storage holds import content (import-from reads
// only import or images volumes); otherwise, for root@pam, the file as iso
// content, imported later from its filesystem path (viaPath); for anyone
// else an error saying what is needed.
func (e *external) downloadFor(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate, p v1alpha1.DownloadParameters) (_ v1alpha1.DownloadParameters, viaPath bool, err error) {
	if p.Content == v1alpha1.ContentISO {
		if !e.cl.MayImportPaths() {
			return p, false, errors.Errorf("imageConfig %s stays iso content (import content takes only %s file names, undecompressed), and Proxmox VE "+
				"imports a disk from an iso volume only by its file path, which it allows root@pam alone: connect as root@pam with its password, "+
				"or download the image as content import with a name ending in .raw or .qcow2", p.VolID(), strings.Join(importExtensions, ", "))
		}
		return p, true, nil
	}
	content, err := e.cl.StorageContent(ctx, p.Node, p.Storage)
	if err != nil {
		return p, false, err
	}
	if slices.Contains(content, v1alpha1.ContentImport) {
		return p, false, nil
	}
	if !e.cl.MayImportPaths() {
		return p, false, errors.Errorf("storage %s on node %s has no import content (it holds: %s), and import-from reads a downloaded image only from "+
			"import content: enable content Import on the storage (Proxmox VE 8.2 or later), or connect as root@pam with its password, "+
			"which may import the image from its file path", p.Storage, p.Node, strings.Join(content, ","))
	}
	return fromPath(cr, p), true, nil
}

// ensureImage makes sure the template's StorageDownloadURL exists and
// returns what to import the disk from once it is Ready ("" before): its
// volume, or the volume's filesystem path when it was downloaded as iso
// content (the root@pam fallback).
func (e *external) ensureImage(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate) (string, error) {
	image, exists, err := e.image(ctx, cr)
	switch {
	case err != nil:
		return "", err
	case !exists:
		return "", e.createImage(ctx, cr)
	case !isISOVolume(image):
		return image, nil
	}
	return e.cl.VolumePath(ctx, cr.Spec.ImageConfig.Node, image)
}

// isISOVolume reports whether volid ("local:iso/noble.img") is iso content.
func isISOVolume(volid string) bool {
	_, name, _ := strings.Cut(volid, ":")
	return strings.HasPrefix(name, v1alpha1.ContentISO+"/")
}

// image reads the template's StorageDownloadURL: whether it exists, and the
// volume it downloaded once it is Ready ("" before).
func (e *external) image(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate) (volid string, exists bool, err error) {
	sdu := &v1alpha1.StorageDownloadURL{}
	err = e.kube.Get(ctx, types.NamespacedName{Namespace: cr.Namespace, Name: imageName(cr)}, sdu)
	switch {
	case kerrors.IsNotFound(err):
		return "", false, nil
	case err != nil:
		return "", false, errors.Wrap(err, "cannot read the template's StorageDownloadURL")
	case !metav1.IsControlledBy(sdu, cr):
		return "", true, errors.Errorf("StorageDownloadURL %s/%s exists and is not this template's", sdu.Namespace, sdu.Name)
	}
	if sdu.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
		return "", true, nil
	}
	return sdu.Status.VolID, true, nil
}

func (e *external) createImage(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate) error {
	p, converted := importParameters(cr)
	staysISO := p.Content == v1alpha1.ContentISO // by its name or compression
	if p.Content == v1alpha1.ContentVZTmpl {
		return errors.New("imageConfig.content vztmpl is a container template: a VM's disk is imported from content import (or iso, converted)")
	}
	p, viaPath, err := e.downloadFor(ctx, cr, p)
	if err != nil {
		return err
	}
	sdu := &v1alpha1.StorageDownloadURL{}
	sdu.SetNamespace(cr.Namespace)
	sdu.SetName(imageName(cr))
	sdu.Spec.DownloadParameters = p
	sdu.Spec.ConnectionRef = cr.Spec.ConnectionRef
	sdu.Spec.ProviderConfigReference = cr.Spec.ProviderConfigReference
	if err := controllerutil.SetControllerReference(cr, sdu, e.kube.Scheme()); err != nil {
		return errors.Wrap(err, "cannot make the template own its StorageDownloadURL")
	}
	if err := e.kube.Create(ctx, sdu); err != nil && !kerrors.IsAlreadyExists(err) {
		return errors.Wrap(err, "cannot create the template's StorageDownloadURL")
	}
	switch {
	case viaPath && staysISO:
		e.record.Event(cr, event.Normal(ReasonImageFromPath, "import content takes no file named "+cr.Spec.ImageConfig.Filename+" (or no compressed one): downloading "+
			p.VolID()+" as iso content and importing the disk from its file path, which Proxmox VE allows root@pam alone"))
	case viaPath:
		e.record.Event(cr, event.Normal(ReasonImageFromPath, "storage "+p.Storage+" on node "+p.Node+" has no import content: downloading "+
			p.VolID()+" as iso content and importing the disk from its file path, which Proxmox VE allows root@pam alone"))
	case converted:
		e.record.Event(cr, event.Normal(ReasonImageConverted, "imageConfig.content is iso, which import-from refuses: downloading "+
			cr.Spec.ImageConfig.Filename+" as import content ("+p.VolID()+")"))
	}
	return nil
}
