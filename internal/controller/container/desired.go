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
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
)

// desired is everything the spec asks of Proxmox.
type desired struct {
	Spec pve.LXCSpec
	Node string
	// Clone is the name of the container template to clone ("" when the
	// container is created from an archive).
	Clone     string
	FullClone bool
	// CloneStorage receives a full clone's volumes ("" = the template's).
	CloneStorage string
	// Create is what a creation from an archive sets (OSTemplate "" for an
	// image until it is pulled).
	Create pve.LXCCreate
	Image  *v1alpha1.ContainerImage

	// Running: a stopped container is started; Stopped: a running one is
	// shut down (gracefully, then stopped after ShutdownTimeout seconds).
	Running         bool
	Stopped         bool
	ShutdownTimeout int
	AllowReboot     bool
}

// desiredFrom reads the spec (and the passwordFrom Secret: from the API
// server when its resourceVersion moved, from the memo otherwise, as a
// VirtualMachine does) into what the controller compares and creates.
func desiredFrom(ctx context.Context, keys guest.SecretKeyReader, cr *v1alpha1.Container) (desired, error) {
	s := &cr.Spec
	d := desired{
		Spec:            pve.LXCSpec{Config: SpecFields.Values(s), AdditionalConfig: s.AdditionalConfig},
		Node:            s.NodeName,
		Running:         s.KeepsRunning(s.AutoStart()),
		Stopped:         s.KeepsStopped(),
		ShutdownTimeout: s.ShutdownTimeout(),
		AllowReboot:     s.MayReboot(),
	}
	t := s.Template
	if t == nil {
		return d, nil
	}
	hardwareInto(&d.Spec, t)
	d.Clone, d.FullClone, d.Image = t.Name, t.IsFullClone(), t.Image
	if d.Clone != "" && len(t.Disk) > 0 {
		d.CloneStorage = t.Disk[0].Storage
	}
	d.Spec.Unprivileged = t.Unprivileged
	d.Create = pve.LXCCreate{OSTemplate: t.OSTemplate, Unprivileged: t.IsUnprivileged(), SSHKeys: t.SSHKeys}
	pw, err := rootPassword(ctx, keys, cr)
	if err != nil {
		return desired{}, err
	}
	d.Create.Password = pw
	return d, nil
}

// The Container's field tables: each row maps an API field to the PVE key
// pve.LXCFields knows the codec, default and apply mode of. Desired state
// and imports both come from them.
var (
	// SpecFields are read from the spec itself.
	SpecFields = guest.Fields{
		{Path: "name", Key: "hostname"},
		{Path: "tags", Key: "tags"},
		{Path: "onboot", Key: "onboot"},
		{Path: "nameserver", Key: "nameserver"},
		{Path: "searchdomain", Key: "searchdomain"},
	}
	// TemplateFields are read from template.
	TemplateFields = guest.Fields{
		{Path: "cores", Key: "cores"},
		{Path: "memory", Key: "memory"},
		{Path: "swap", Key: "swap"},
	}
	// FeatureFields are the flags of template.features, keys of
	// pve.LXCFeatureFields. They do not late-init: within features, false
	// is a flag the spec turns off.
	FeatureFields = guest.Fields{
		{Path: "nesting", Key: "nesting"},
		{Path: "keyctl", Key: "keyctl"},
		{Path: "fuse", Key: "fuse"},
	}
	// NetworkFields are the options of each interface (netN), keys of
	// pve.LXCNICFields.
	NetworkFields = guest.Fields{
		{Path: "name", Key: "name"},
		{Path: "bridge", Key: "bridge"},
		{Path: "vlan", Key: "tag"},
		{Path: "ip", Key: "ip"},
		{Path: "gw", Key: "gw"},
		{Path: "ip6", Key: "ip6"},
		{Path: "gw6", Key: "gw6"},
	}
)

func hardwareInto(s *pve.LXCSpec, t *v1alpha1.ContainerTemplate) {
	maps.Copy(s.Config, TemplateFields.Values(t))
	for i, disk := range t.Disk {
		v := pve.LXCVolume{Storage: disk.Storage, SizeGB: int(disk.Size), Path: disk.Path}
		switch {
		case i == 0:
			s.RootFS = &v
		case v.Path != "":
			s.Mounts = append(s.Mounts, v)
		}
	}
	for i := range t.Network {
		s.NICs = append(s.NICs, pve.LXCNIC{Options: NetworkFields.Values(&t.Network[i])})
	}
	if f := t.Features; f != nil {
		s.Features = FeatureFields.Values(f)
	}
}

// Imported fills spec (its own fields and template) with what describes a
// container as it is (pve.ImportedLXCSpec; hardwareInto read backwards). It
// names no source: an imported container is never created by the provider.
func Imported(s pve.LXCSpec, spec *v1alpha1.ContainerSpec) {
	SpecFields.Fill(spec, s.Config)
	t := &v1alpha1.ContainerTemplate{}
	TemplateFields.Fill(t, s.Config)
	if s.RootFS != nil {
		for _, v := range append([]pve.LXCVolume{*s.RootFS}, s.Mounts...) {
			t.Disk = append(t.Disk, v1alpha1.ContainerDisk{Storage: v.Storage, Size: int32(v.SizeGB), Path: v.Path}) //nolint:gosec // PVE's limits are far below int32
		}
	}
	for _, n := range s.NICs {
		nic := v1alpha1.ContainerNetwork{}
		NetworkFields.Fill(&nic, n.Options)
		t.Network = append(t.Network, nic)
	}
	if s.Features != nil {
		t.Features = &v1alpha1.ContainerFeatures{}
		FeatureFields.Fill(t.Features, s.Features)
	}
	spec.Template = t
}

// lateInit fills the fields spec leaves unset with the container's values
// (cfg read as pve.ImportedLXCSpec reads it, through the same tables), and
// reports whether it set any. A template or NIC the spec lacks is not made.
func lateInit(spec *v1alpha1.ContainerSpec, cfg pve.GuestConfig) bool {
	is := pve.ImportedLXCSpec(cfg)
	set := SpecFields.LateInit(spec, is.Config)
	t := spec.Template
	if t == nil {
		return set
	}
	set = TemplateFields.LateInit(t, is.Config) || set
	for i := range min(len(t.Network), len(is.NICs)) {
		set = NetworkFields.LateInit(&t.Network[i], is.NICs[i].Options) || set
	}
	return set
}

// rootPassword returns root's password from the spec or its Secret, ""
// when none is set. It must never be logged, evented or written to status.
func rootPassword(ctx context.Context, keys guest.SecretKeyReader, cr *v1alpha1.Container) (string, error) {
	t := cr.Spec.Template
	if t.Password != "" || t.PasswordFrom == nil {
		return t.Password, nil
	}
	ref := t.PasswordFrom
	k, err := keys.Key(ctx, types.NamespacedName{Namespace: cr.GetNamespace(), Name: ref.Name}, ref.Key)
	switch {
	case errors.Is(err, secrets.ErrKeyNotFound):
		return "", errors.Errorf("Secret %s/%s has no key %q (template.passwordFrom)", cr.GetNamespace(), ref.Name, ref.Key)
	case err != nil:
		return "", errors.Wrapf(err, "cannot read Secret %s/%s named by template.passwordFrom", cr.GetNamespace(), ref.Name)
	}
	return string(k.Value), nil
}

// Sources as annotationSource records them.
const (
	sourceOSTemplate = "ostemplate "
	sourceImage      = "image "
)

// recordedSource reads what the container was created from (nil: a clone,
// an import, or a container created before this was recorded).
func recordedSource(annotations map[string]string) *v1alpha1.ContainerSource {
	v := annotations[annotationSource]
	switch {
	case strings.HasPrefix(v, sourceOSTemplate):
		return &v1alpha1.ContainerSource{OSTemplate: strings.TrimPrefix(v, sourceOSTemplate)}
	case strings.HasPrefix(v, sourceImage):
		return &v1alpha1.ContainerSource{ImageReference: strings.TrimPrefix(v, sourceImage)}
	}
	return nil
}

// sourceAnnotation renders s for annotationSource ("" for none).
func sourceAnnotation(s *v1alpha1.ContainerSource) string {
	switch {
	case s == nil:
		return ""
	case s.ImageReference != "":
		return sourceImage + s.ImageReference
	default:
		return sourceOSTemplate + s.OSTemplate
	}
}

// replacement says why the container must be replaced: the image reference
// or ostemplate the spec names is not what it was created from. "" when
// nothing changed or the source is not known.
func replacement(recorded, wanted *v1alpha1.ContainerSource) string {
	switch {
	case recorded == nil || wanted == nil || *recorded == *wanted:
		return ""
	case wanted.ImageReference != "" && recorded.ImageReference != "":
		return "template.image.reference changed from " + recorded.ImageReference + " to " + wanted.ImageReference
	case wanted.OSTemplate != "" && recorded.OSTemplate != "":
		return "template.ostemplate changed from " + recorded.OSTemplate + " to " + wanted.OSTemplate
	}
	return "the source changed from " + sourceAnnotation(recorded) + " to " + sourceAnnotation(wanted)
}
