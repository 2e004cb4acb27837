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

package guest

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// MaxCreateAttempts bounds the VMIDs one Create tries when PVE says they
// are taken.
const MaxCreateAttempts = 5

// CreateAt claims the resource's VMID (stored on the resource before any
// PVE call) and runs start there: a clone or create returning its task's
// UPID, which is recorded in the create-task annotation. A VMID PVE says is
// taken is given up only when this resource never asked for it before;
// otherwise the guest there may be our own earlier request whose answer was
// lost, and Observe's marker rules decide. A locked source is retried
// quietly after the reconciler's backoff.
func (id Identity) CreateAt(ctx context.Context, mg resource.Managed, start func(vmid int) (string, error)) error {
	for attempt := 0; attempt < MaxCreateAttempts; attempt++ {
		vmid, fresh, err := id.Claim(ctx, mg)
		if err != nil {
			return err
		}
		upid, err := start(vmid)
		switch {
		case err == nil:
			meta.AddAnnotations(mg, map[string]string{AnnotationCreateTask: upid})
			return nil
		case pve.IsAlreadyExists(err) && !fresh:
			id.Record.Event(mg, event.Normal(ReasonVMIDInUse, id.Noun+" "+strconv.Itoa(vmid)+" exists now; waiting to see whose it is"))
			return nil
		case pve.IsAlreadyExists(err):
			// PVE refused atomically, and we never asked for this VMID
			// before: nothing of ours exists at vmid.
			id.Record.Event(mg, event.Normal(ReasonVMIDTaken, "VMID "+strconv.Itoa(vmid)+" is taken; picking another"))
			ForgetExternalName(mg)
		case pve.IsLocked(err):
			id.Record.Event(mg, event.Normal(ReasonSourceBusy, "the template is locked by another operation; retrying"))
			return nil
		default:
			return err
		}
	}
	return errors.Errorf("gave up after %d VMIDs that were taken", MaxCreateAttempts)
}

// FindTemplate finds a template of the identity's guest type by name in a
// listing no older than maxAge, preferring one on node, then the lowest
// VMID.
func (id Identity) FindTemplate(ctx context.Context, name, node string, maxAge time.Duration) (pve.GuestRef, error) {
	rows, err := id.Client.CachedClusterResources(ctx, maxAge)
	if err != nil {
		return pve.GuestRef{}, err
	}
	found, err := TemplatesNamed(rows, name, id.Type)
	if err != nil {
		return pve.GuestRef{}, err
	}
	sort.Slice(found, func(i, j int) bool {
		if (found[i].Node == node) != (found[j].Node == node) {
			return found[i].Node == node
		}
		return found[i].VMID < found[j].VMID
	})
	return found[0], nil
}

// TemplatesNamed are the templates of type typ named name in a
// /cluster/resources listing, or ErrTemplateNotFound.
func TemplatesNamed(rows []pve.Resource, name string, typ pve.GuestType) ([]pve.GuestRef, error) {
	var found []pve.GuestRef
	for _, r := range rows {
		if r.Template && r.Name == name && (r.Type == "" || r.Type == string(typ)) {
			found = append(found, pve.GuestRef{Type: typ, Node: r.Node, VMID: r.VMID})
		}
	}
	if len(found) == 0 {
		return nil, errors.Errorf("template %q %w", name, ErrTemplateNotFound)
	}
	return found, nil
}

// TemplateListingAge bounds the /cluster/resources view a template is
// found by name in.
const TemplateListingAge = 30 * time.Second

// CloneTemplate clones the template named name (found by FindTemplate) into
// opts.NewID on node, moving it there when the template lives elsewhere,
// and says so with an event on obj. It returns the clone task's UPID.
func (id Identity) CloneTemplate(ctx context.Context, obj resource.Managed, name, node string, opts pve.CloneOptions) (string, error) {
	src, err := id.FindTemplate(ctx, name, node, TemplateListingAge)
	if err != nil {
		return "", err
	}
	if src.Node != node {
		opts.Target = node
	}
	upid, err := id.Client.CloneGuest(ctx, src, opts)
	if err != nil {
		return "", err
	}
	kind := "full"
	if !opts.Full {
		kind = "linked"
	}
	id.Record.Event(obj, event.Normal(ReasonCloning, "cloning template "+name+" ("+src.String()+") to "+id.Noun+" "+strconv.Itoa(opts.NewID)+" on node "+node+" ("+kind+" clone)"))
	return upid, nil
}
