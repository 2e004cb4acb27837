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

// Package storagedownloadurl manages StorageDownloadURLs: files Proxmox VE
// downloads from a URL into a storage.
//
// The external name is the volume id (storage:content/filename). Create
// starts PVE's download task and records it in the create-task annotation;
// Observe follows it across reconciles (status.lastTask) and reads the
// storage's content list. A failed download is shown on Ready with PVE's
// reason from the task log and tried again after a wait that doubles with
// each failure in a row (status.failures, status.retryAfter). A changed url
// or checksum downloads again (Update): status.source says what the stored
// file came from.
//
// A file already in the storage under that name that the provider did not
// download is adopted only when its size and format are what the download
// would give (PVE keeps no checksum of a stored file; the size comes from
// the node's query-url-metadata); otherwise Ready says why it is left
// alone, and it is never overwritten. Delete removes the file unless
// deletionProtection is set.
package storagedownloadurl
