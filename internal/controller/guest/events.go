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
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
)

// Event reasons every guest kind uses, so users and alerts read one
// vocabulary whatever the kind. A kind adds its own for steps only it takes.
const (
	ReasonCreating           event.Reason = "Creating"
	ReasonVMIDInUse          event.Reason = "VMIDInUse"
	ReasonVMIDTaken          event.Reason = "VMIDTaken"
	ReasonSourceBusy         event.Reason = "SourceBusy"
	ReasonCloning            event.Reason = "Cloning"
	ReasonTaskFailed         event.Reason = "TaskFailed"
	ReasonConfigured         event.Reason = "Configured"
	ReasonDriftCorrected     event.Reason = "DriftCorrected"
	ReasonAdopted            event.Reason = "Adopted"
	ReasonStarted            event.Reason = "Started"
	ReasonRebooted           event.Reason = "Rebooted"
	ReasonShuttingDown       event.Reason = "ShuttingDown"
	ReasonStopping           event.Reason = "Stopping"
	ReasonForcedStop         event.Reason = "ForcedStop"
	ReasonDeleting           event.Reason = "Deleting"
	ReasonDeletionProtection event.Reason = "DeletionProtection"
)

// Connection-detail keys every guest kind publishes (never a Proxmox
// credential).
const (
	ConnectionDetailVMID      = "vmid"
	ConnectionDetailNode      = "node"
	ConnectionDetailName      = "name"
	ConnectionDetailIPAddress = "ipAddress"
	ConnectionDetailEndpoint  = "endpoint"
	ConnectionDetailUsername  = "username"
	ConnectionDetailPassword  = "password"
)

// ReportConfigured tells what a configuration change touched (fields): a
// Warning (DriftCorrected) when it undid drift on a resource that was Ready
// with an unchanged spec, a Normal (Configured) when it carried out a change
// asked for (or the first configuration).
func ReportConfigured(rec event.Recorder, obj runtime.Object, fields []string, wasReady, specChanged bool) {
	switch {
	case len(fields) == 0:
	case wasReady && !specChanged:
		rec.Event(obj, event.Warning(ReasonDriftCorrected, errors.New("corrected drift in "+strings.Join(fields, ", "))))
	default:
		rec.Event(obj, event.Normal(ReasonConfigured, "configured "+strings.Join(fields, ", ")))
	}
}
