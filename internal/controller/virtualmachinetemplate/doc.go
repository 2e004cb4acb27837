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

// Package virtualmachinetemplate manages VirtualMachineTemplates: Proxmox VE
// template VMs built from a cloud image.
//
// The build has three steps, each resumable from what Proxmox VE and the
// resource record:
//
//  1. Image: a StorageDownloadURL in the same namespace, owned by the
//     template, downloads imageConfig. import-from reads only content
//     import (or images), so an iso imageConfig (kubemox's manifests) is
//     downloaded as import instead (a .img file name becomes .qcow2), with
//     an event saying so. On a storage without import content, root@pam
//     (password login) downloads it as iso and imports the disk from the
//     volume's file path; any other credential gets an error saying to
//     enable import content or use root@pam.
//  2. Create: the VMID is stored as the external name before anything is
//     asked of Proxmox VE (guest.Identity, as VirtualMachine), then one
//     qmcreate makes the VM with its disk imported from the image, the
//     cloud-init drive on the configured storage, cloud-init and the boot
//     order. PVE writes all of it in one task and removes the config when
//     the task fails, so this step is all or nothing. The VM carries the
//     ownership marker in its description.
//  3. Template: the stopped VM is converted (qmtemplate).
//
// Observe reports the template as existing only once it is a template (or
// while the resource is being deleted and a VM of its is there), so Create
// drives the build: each call takes the next step, or waits while a task of
// ours runs. The task of the last step is in the create-task annotation. A
// restart in the middle finds the VMID, the marker and the task, and never
// makes a second template.
//
// A template is immutable: a change of what it was built from after the
// build is reported (condition TemplateUpToDate False, a Warning event),
// never applied by destroying a template that clones depend on. Deleting a
// template that linked clones still use fails in Proxmox VE; its reason is
// returned from Delete (Synced) and the deletion retried with backoff.
package virtualmachinetemplate
