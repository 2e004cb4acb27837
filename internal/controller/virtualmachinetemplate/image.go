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

// ReasonImageConverted is the event saying an iso imageConfig is
// downloaded as import content.
const ReasonImageConverted event.Reason = "ImageContentConverted"

// imageName is the name of the template's StorageDownloadURL.
func imageName(cr *v1alpha1.VirtualMachineTemplate) string { return cr.Name + "-image" }

// importParameters are the download the template imports its disk from:
// imageConfig, with iso content turned into import (import-from refuses an
// iso volume) and a .img file name into .qcow2 (import content takes
// .qcow2, .raw, .vmdk and .ova; cloud images named .img are qcow2 files).
// converted reports whether anything was changed.
func importParameters(cr *v1alpha1.VirtualMachineTemplate) (p v1alpha1.DownloadParameters, converted bool) {
	p = cr.Spec.ImageConfig
	if p.Content != v1alpha1.ContentISO {
		return p, false
	}
	p.Content, p.Compression = v1alpha1.ContentImport, ""
	if base, ok := strings.CutSuffix(p.Filename, ".img"); ok {
		p.Filename = base + ".qcow2"
	}
	return p, true
}

// ensureImage makes sure the template's StorageDownloadURL exists and
// returns the volume it downloaded once it is Ready ("" before).
func (e *external) ensureImage(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate) (string, error) {
	image, exists, err := e.image(ctx, cr)
	if err != nil || exists {
		return image, err
	}
	return "", e.createImage(ctx, cr)
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
	if p.Content == v1alpha1.ContentVZTmpl {
		return errors.New("imageConfig.content vztmpl is a container template: a VM's disk is imported from content import (or iso, converted)")
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
	if converted {
		e.record.Event(cr, event.Normal(ReasonImageConverted, "imageConfig.content is iso, which import-from refuses: downloading "+
			cr.Spec.ImageConfig.Filename+" as import content ("+p.VolID()+")"))
	}
	return nil
}
