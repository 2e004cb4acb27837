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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// Conditions and events of this kind.
const (
	// TypeTemplateUpToDate says whether the template matches the spec.
	TypeTemplateUpToDate xpv2.ConditionType = "TemplateUpToDate"
	// ReasonSpecChanged: the spec changed after the build.
	ReasonSpecChanged xpv2.ConditionReason = "SpecChanged"
	// ReasonBuiltFromSpec: the template is what the spec describes.
	ReasonBuiltFromSpec xpv2.ConditionReason = "BuiltFromSpec"

	ReasonTemplateImmutable event.Reason = "TemplateImmutable"
	ReasonConverting        event.Reason = "ConvertingToTemplate"
)

// external builds and observes one VirtualMachineTemplate.
type external struct {
	kube    client.Client
	secrets client.Reader
	cl      Proxmox
	id      guest.Identity
	record  event.Recorder
}

// found is what Observe learnt about the resource's VM.
type found struct {
	ref    pve.GuestRef
	status pve.GuestStatus
}

// Observe finds the template VM. It exists for the reconciler once it is a
// template; before, Create takes the next build step.
func (e *external) Observe(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate) (managed.ExternalObservation, error) {
	name := meta.GetExternalName(cr)
	if guest.KeptByProtection(e.record, cr, cr.Spec.DeletionProtection, "template "+name) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if name == "" && !meta.WasDeleted(cr) {
		// A template marked by this resource's namespace and name is
		// adopted, not built again (guest.AdoptExisting); so is a VM whose
		// build stopped before the conversion (the provider or the control
		// plane lost): the build resumes on it below.
		adopted, wait, err := e.id.AdoptExisting(ctx, cr, guest.AdoptTarget{Name: cr.Spec.Name, Template: true, Status: &cr.Status.Adoption})
		if err != nil || wait {
			return managed.ExternalObservation{ResourceExists: wait, ResourceUpToDate: wait}, err
		}
		if adopted {
			name = meta.GetExternalName(cr)
		}
	}
	vmid, ok := guest.VMIDOf(name)
	if !ok {
		image, exists, err := e.image(ctx, cr)
		if err != nil {
			return managed.ExternalObservation{}, err
		}
		// Create makes the image's StorageDownloadURL, or the VM once the
		// image is there.
		return e.building(cr, v1alpha1.TemplateStepImage, false, !exists || image != ""), nil
	}
	guest.FollowLaterCreateTask(cr, &cr.Status.LastTask)
	running, err := guest.RefreshTask(ctx, e.cl, e.record, cr, cr.Status.LastTask)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	vm, present, err := e.find(ctx, cr, vmid)
	if err != nil || !present {
		return e.absent(ctx, cr, running, err)
	}
	cfg, err := e.cl.GuestPending(ctx, vm.ref)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	switch guest.Decide(e.id.MarkerOf(cr), cr, int(cr.Status.VMID), vmid, vm.status.Lock, pve.Description(cfg)) {
	case guest.LostRace:
		return e.id.LostRace(ctx, cr, vmid)
	case guest.Conflict:
		return managed.ExternalObservation{}, errors.Errorf("VMID %d holds a VM this resource did not create", vmid)
	case guest.InProgress:
		return e.building(cr, v1alpha1.TemplateStepCreate, true, false), nil
	case guest.Imported:
		return e.observed(cr, vm), nil
	case guest.Mine, guest.MineNewUID:
		// Ours: the build goes on below.
	}
	cr.Status.VMID, cr.Status.Node = int32(vmid), vm.ref.Node //nolint:gosec // VMIDOf bounds it to PVE's range.
	if !vm.status.Template {
		// Create converts the VM, unless our conversion (or another task)
		// runs or PVE holds a lock.
		act := !running && vm.status.Lock == ""
		return e.building(cr, v1alpha1.TemplateStepTemplate, true, act), nil
	}
	return e.observed(cr, vm), nil
}

// find locates the VM at vmid.
func (e *external) find(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate, vmid int) (found, bool, error) {
	loc, err := e.id.Locate(ctx, vmid, listingAge, guest.CandidateNodes(cr.Status.Node, cr.Spec.NodeName))
	if err != nil || !loc.Found {
		return found{}, false, err
	}
	if loc.Ref.Node == "" {
		return found{}, false, errors.Errorf("VMID %d is taken and its node not known yet", vmid)
	}
	st := loc.Status
	if st == nil {
		s, err := e.cl.GuestStatus(ctx, loc.Ref)
		if pve.IsGuestNotFound(err) {
			return found{}, false, nil
		}
		if err != nil {
			return found{}, false, err
		}
		st = &s
	}
	return found{ref: loc.Ref, status: *st}, true, nil
}

// absent handles a VMID without a VM: the create task may still be writing
// it, or have failed (its reason is returned and the create retried).
func (e *external) absent(ctx context.Context, cr *v1alpha1.VirtualMachineTemplate, running bool, err error) (managed.ExternalObservation, error) {
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if running {
		return e.building(cr, v1alpha1.TemplateStepCreate, false, false), nil
	}
	underway, err := guest.CheckPreviousCreate(ctx, e.cl, cr)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	return e.building(cr, v1alpha1.TemplateStepCreate, false, !underway), nil
}

// building reports a build under way at step. When Create has something to
// do now (act), the template is reported absent so that Create takes the
// next step; while it waits (a download, a task of ours, a lock) it is
// reported present, so the reconciler polls it again within seconds rather
// than backing off from repeated creates. A resource being deleted exists
// exactly when its VM does (vmExists), so that Delete removes a half-built
// VM and nothing else.
func (e *external) building(cr *v1alpha1.VirtualMachineTemplate, step string, vmExists, act bool) managed.ExternalObservation {
	cr.Status.Step, cr.Status.Status = step, step
	cr.SetConditions(xpv2.Creating().WithMessage("build step: " + step).WithObservedGeneration(cr.GetGeneration()))
	exists := !act
	if meta.WasDeleted(cr) {
		exists = vmExists
	}
	return managed.ExternalObservation{ResourceExists: exists, ResourceUpToDate: true}
}

// observed reports a built template: Ready, with whether the spec changed
// since it was built (never applied: a template is immutable).
func (e *external) observed(cr *v1alpha1.VirtualMachineTemplate, vm found) managed.ExternalObservation {
	st := &cr.Status
	st.Step, st.Status, st.Node = v1alpha1.TemplateStepDone, "Ready", vm.ref.Node
	st.VMID = int32(vm.ref.VMID) //nolint:gosec // VMIDOf bounds it to PVE's range.
	digest := builtFrom(cr)
	if st.BuiltFrom == "" {
		st.BuiltFrom = digest
	}
	cr.SetConditions(xpv2.Available().WithObservedGeneration(cr.GetGeneration()))
	if st.BuiltFrom != digest {
		if cr.GetCondition(TypeTemplateUpToDate).Reason != ReasonSpecChanged {
			e.record.Event(cr, event.Warning(ReasonTemplateImmutable, errors.New("the spec changed after the template was built; Proxmox VE templates are immutable, so the change is not applied: create a new VirtualMachineTemplate")))
		}
		cr.SetConditions(xpv2.Condition{Type: TypeTemplateUpToDate, Status: corev1.ConditionFalse, Reason: ReasonSpecChanged,
			Message: "the spec changed after the template was built; templates are immutable: create a new VirtualMachineTemplate", LastTransitionTime: metav1.Now()})
	} else {
		cr.SetConditions(xpv2.Condition{Type: TypeTemplateUpToDate, Status: corev1.ConditionTrue, Reason: ReasonBuiltFromSpec, LastTransitionTime: metav1.Now()})
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ConnectionDetails: managed.ConnectionDetails{
		guest.ConnectionDetailVMID: []byte(strconv.Itoa(vm.ref.VMID)), guest.ConnectionDetailNode: []byte(vm.ref.Node),
		guest.ConnectionDetailName: []byte(cr.Spec.Name),
	}}
}

// builtFrom is a digest of what the template is built from.
func builtFrom(cr *v1alpha1.VirtualMachineTemplate) string {
	s := cr.Spec
	b, _ := json.Marshal([]any{s.Name, s.NodeName, s.VirtualMachineConfig, s.ImageConfig, s.CloudInitConfig, s.AdditionalConfig}) //nolint:errchkjson // plain data.
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Update has nothing to do: a built template is never changed.
func (e *external) Update(context.Context, *v1alpha1.VirtualMachineTemplate) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, nil
}

// Disconnect implements managed.TypedExternalClient.
func (e *external) Disconnect(context.Context) error { return nil }
