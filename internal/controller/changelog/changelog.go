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

// Package changelog gives the reconcilers the provider wrote itself
// (VirtualMachineSet, VirtualMachineSnapshotPolicy, GuestImport) change-log
// entries like those crossplane-runtime's managed reconciler sends: one per
// managed resource they create, update or delete, with the resource's kind,
// name and external name and, in the additional details, who made the
// change.
package changelog

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	changelogs "github.com/crossplane/crossplane-runtime/v2/apis/changelogs/proto/v1alpha1"
	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

// Keys of the additional details of an entry made by an own reconciler.
const (
	// DetailReconciler is the kind whose reconciler made the change.
	DetailReconciler = "reconciler"
	// DetailOwner is the namespace/name of the object it made it for.
	DetailOwner = "owner"
)

// DetailFields is the additional detail of an update entry naming the
// fields it changed (comma separated), never their values.
const DetailFields = "fields"

// Fields is the additional details of an update that changed fields; nil
// when none.
func Fields(fields []string) managed.AdditionalDetails {
	if len(fields) == 0 {
		return nil
	}
	return managed.AdditionalDetails{DetailFields: strings.Join(fields, ",")}
}

// DetailExternalName is the additional detail of a create entry naming the
// external name the creation picked: the entry carries the resource as it
// was before, when a VMID was not picked yet.
const DetailExternalName = "externalName"

// Created is the additional details of a creation that gave mg its
// external name; nil when it has none yet.
func Created(mg resource.Managed) managed.AdditionalDetails {
	name := meta.GetExternalName(mg)
	if name == "" {
		return nil
	}
	return managed.AdditionalDetails{DetailExternalName: name}
}

// Operations, as crossplane-runtime's entries name them.
const (
	Create = changelogs.OperationType_OPERATION_TYPE_CREATE
	Update = changelogs.OperationType_OPERATION_TYPE_UPDATE
	Delete = changelogs.OperationType_OPERATION_TYPE_DELETE
)

// Recorder sends the entries of one own reconciler. The zero Recorder (change
// logs off) sends nothing.
type Recorder struct {
	logger     managed.ChangeLogger
	log        logging.Logger
	reconciler string
}

// NewRecorder returns the recorder of the reconciler of kind reconciler,
// sending through o's change logger when change logs are on.
func NewRecorder(o controller.Options, reconciler string) Recorder {
	if o.ChangeLogOptions == nil || o.ChangeLogOptions.ChangeLogger == nil {
		return Recorder{}
	}
	return Recorder{logger: o.ChangeLogOptions.ChangeLogger, log: o.Logger, reconciler: reconciler}
}

// Record sends the entry of op on mg (of kind gvk), done, or failed with
// changeErr, for owner. mg is as it was before the change. A failure to
// send is logged, never returned: a change log never stops a reconcile
// (crossplane-runtime's managed reconciler does the same).
func (r Recorder) Record(ctx context.Context, mg resource.Managed, gvk schema.GroupVersionKind, op changelogs.OperationType, changeErr error, owner client.Object) {
	if r.logger == nil {
		return
	}
	// Objects built in code, or decoded by a typed client, carry no kind;
	// the entry names it.
	entry, ok := mg.DeepCopyObject().(resource.Managed)
	if !ok {
		return
	}
	entry.GetObjectKind().SetGroupVersionKind(gvk)
	details := managed.AdditionalDetails{
		DetailReconciler: r.reconciler,
		DetailOwner:      client.ObjectKeyFromObject(owner).String(),
	}
	if err := r.logger.Log(ctx, entry, op, changeErr, details); err != nil && r.log != nil {
		r.log.Info("Cannot record a change log entry", "error", err, "reconciler", r.reconciler, "name", mg.GetName())
	}
}
