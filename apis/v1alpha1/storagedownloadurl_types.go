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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// Content types a StorageDownloadURL may download.
const (
	ContentISO    = "iso"
	ContentVZTmpl = "vztmpl"
	ContentImport = "import"
)

// DownloadParameters say what Proxmox VE downloads where: kubemox's
// StorageDownloadURL spec, also a VirtualMachineTemplate's imageConfig.
//
// +kubebuilder:validation:XValidation:rule="!has(self.compression) || size(self.compression) == 0 || self.content == 'iso'",message="compression is valid only for content iso: Proxmox VE decompresses only ISO downloads"
// +kubebuilder:validation:XValidation:rule="(has(self.checksum) && size(self.checksum) > 0) == (has(self.checksumAlgorithm) && size(self.checksumAlgorithm) > 0)",message="checksum and checksumAlgorithm must be set together"
type DownloadParameters struct {
	// Content is the content type of the file: iso, vztmpl (a container
	// template) or import (a disk image for import-from: .qcow2, .raw,
	// .vmdk, .ova; Proxmox VE 8.2 or later).
	// +kubebuilder:validation:Enum=iso;vztmpl;import
	Content string `json:"content"`

	// Filename is the name of the file in the storage. Proxmox VE checks its
	// extension against the content type.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z0-9_.-]+$')",message="filename may hold only letters, digits, '_', '.' and '-' (Proxmox VE would rename the file otherwise)"
	Filename string `json:"filename"`

	// Node is the Proxmox VE node that downloads the file.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Node string `json:"node"`

	// Storage is the file-based storage the file goes to.
	// +kubebuilder:default=local
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Storage string `json:"storage,omitempty"`

	// URL to download from (http or https). A changed URL downloads again.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://.+')",message="url must be an http:// or https:// URL"
	URL string `json:"url"`

	// Checksum the file must have; Proxmox VE verifies it after the
	// download. A changed checksum downloads again.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Checksum string `json:"checksum,omitempty"`

	// ChecksumAlgorithm of checksum.
	// +kubebuilder:validation:Enum=md5;sha1;sha224;sha256;sha384;sha512
	// +optional
	ChecksumAlgorithm string `json:"checksumAlgorithm,omitempty"`

	// Compression decompresses an ISO download with this algorithm (gz,
	// lzo, zst, bz2: the ones Proxmox VE knows; it checks the value only
	// inside its download task, so another one is refused here).
	// +kubebuilder:validation:Enum=gz;lzo;zst;bz2
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Compression string `json:"compression,omitempty"`

	// VerifyCertificate says whether Proxmox VE verifies the server's TLS
	// certificate. Unset leaves Proxmox VE's default (verify); an explicit
	// false is sent as such.
	// +optional
	VerifyCertificate *bool `json:"verifyCertificate,omitempty"`
}

// StorageDownloadURLSpec is the desired state of a StorageDownloadURL.
//
// +kubebuilder:validation:XValidation:rule="self.node == oldSelf.node && self.storage == oldSelf.storage && self.content == oldSelf.content && self.filename == oldSelf.filename",message="node, storage, content and filename are immutable: they name the volume; create another StorageDownloadURL for another file"
type StorageDownloadURLSpec struct {
	// The connection, management policies and connection-detail Secret
	// (volid, node and storage are written to it).
	ResourceSpec `json:",inline"`

	DownloadParameters `json:",inline"`

	// DeletionProtection keeps the file in Proxmox VE when this resource is
	// deleted.
	// +kubebuilder:default=false
	// +optional
	DeletionProtection bool `json:"deletionProtection,omitempty"`
}

// Download states.
const (
	DownloadStateDownloading = "downloading"
	DownloadStateAvailable   = "available"
	DownloadStateFailed      = "failed"
	// DownloadStateConflict: a file the provider did not download holds
	// the name, and it is not what the download would give.
	DownloadStateConflict = "conflict"
)

// DownloadSource is what a stored file was downloaded from.
type DownloadSource struct {
	// URL the file was downloaded from.
	URL string `json:"url"`

	// Checksum the download was verified against ("" for none).
	// +optional
	Checksum string `json:"checksum,omitempty"`
}

// StorageDownloadURLStatus is the observed state of a StorageDownloadURL.
type StorageDownloadURLStatus struct {
	// Conditions (Ready, Synced) and the observed generation.
	xpv2.ManagedResourceStatus `json:",inline"`
	PollStatus                 `json:",inline"`

	// VolID is the Proxmox VE volume id of the file
	// (storage:content/filename).
	// +optional
	VolID string `json:"volid,omitempty"`

	// Size of the stored file in bytes.
	// +optional
	Size int64 `json:"size,omitempty"`

	// Format Proxmox VE reports for the file (iso, qcow2, raw, tzst...).
	// +optional
	Format string `json:"format,omitempty"`

	// State is downloading, available, failed or conflict.
	// +optional
	State string `json:"state,omitempty"`

	// Source is what the stored file was downloaded from: a different
	// spec.url or spec.checksum downloads again. Unset for an adopted file.
	// +optional
	Source *DownloadSource `json:"source,omitempty"`

	// Downloading is what the download under way fetches.
	// +optional
	Downloading *DownloadSource `json:"downloading,omitempty"`

	// LastTask is the last Proxmox VE task started for this file (download
	// or delete).
	// +optional
	LastTask *TaskStatus `json:"lastTask,omitempty"`

	// Failures counts the downloads that failed in a row; each doubles the
	// wait before the next attempt.
	// +optional
	Failures int32 `json:"failures,omitempty"`

	// RetryAfter is when a failed download is tried again.
	// +optional
	RetryAfter *metav1.Time `json:"retryAfter,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=sdu,categories={crossplane,managed,proxmox}
// +kubebuilder:printcolumn:name="VOLID",type="string",JSONPath=".status.volid"
// +kubebuilder:printcolumn:name="SIZE",type="integer",JSONPath=".status.size"
// +kubebuilder:printcolumn:name="STATE",type="string",JSONPath=".status.state"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="NEXT-CHECK",type="string",JSONPath=".status.nextCheckTime",priority=1
// +crossplane:generate:methods=false

// A StorageDownloadURL is a file Proxmox VE downloads from a URL into a
// storage: an ISO, a container template or a disk image to import. Its
// external name is the volume id.
type StorageDownloadURL struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   StorageDownloadURLSpec   `json:"spec"`
	Status StorageDownloadURLStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true
// +crossplane:generate:methods=false

// StorageDownloadURLList contains a list of StorageDownloadURL.
type StorageDownloadURLList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StorageDownloadURL `json:"items"`
}
