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

import "github.com/crossplane/crossplane-runtime/v2/pkg/event"

// Event reasons of steps only a Container takes; the ones every guest kind
// shares are guest.Reason*.
const (
	reasonSourceBusy   event.Reason = "SourceBusy"
	reasonPullingImage event.Reason = "PullingImage"
	reasonImagePulled  event.Reason = "ImagePulled"
	reasonRemovingFile event.Reason = "RemovingImageFile"
	reasonReplacing    event.Reason = "Replacing"
	reasonResized      event.Reason = "Resized"
)

// Annotations a Container keeps between reconciles.
const (
	// annotationPullTask is the UPID of the oci-registry-pull task Create
	// started.
	annotationPullTask = "proxmox.alperen.cloud/image-pull-task"
	// annotationPulled is the image reference the provider pulled last, so
	// a file of the same name from another reference is told apart.
	annotationPulled = "proxmox.alperen.cloud/image-pulled"
	// annotationSource records what Create created the container from
	// ("ostemplate <volid>" or "image <reference>"); status.source shows it.
	annotationSource = "proxmox.alperen.cloud/created-from"
)
