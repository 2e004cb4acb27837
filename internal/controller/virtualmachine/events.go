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

package virtualmachine

import "github.com/crossplane/crossplane-runtime/v2/pkg/event"

// Event reasons of steps only a VirtualMachine takes; the ones every guest
// kind shares are guest.Reason*.
const (
	reasonCreatingFromScratch event.Reason = "CreatingFromScratch"
	reasonPasswordApplied     event.Reason = "PasswordApplied"
	reasonDiskAdded           event.Reason = "DiskAdded"
	reasonResized             event.Reason = "Resized"
)
