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
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// StorageDownloadURL type metadata.
var (
	StorageDownloadURLKind             = reflect.TypeFor[StorageDownloadURL]().Name()
	StorageDownloadURLGroupKind        = schema.GroupKind{Group: Group, Kind: StorageDownloadURLKind}.String()
	StorageDownloadURLKindAPIVersion   = StorageDownloadURLKind + "." + SchemeGroupVersion.String()
	StorageDownloadURLGroupVersionKind = SchemeGroupVersion.WithKind(StorageDownloadURLKind)

	StorageDownloadURLListKind             = reflect.TypeFor[StorageDownloadURLList]().Name()
	StorageDownloadURLListGroupVersionKind = SchemeGroupVersion.WithKind(StorageDownloadURLListKind)
)

func init() {
	SchemeBuilder.Register(&StorageDownloadURL{}, &StorageDownloadURLList{})
}

// VolID is the volume the download creates (storage:content/filename).
func (p *DownloadParameters) VolID() string {
	return p.Storage + ":" + p.Content + "/" + p.Filename
}

// Source is what the parameters download from.
func (p *DownloadParameters) Source() DownloadSource {
	return DownloadSource{URL: p.URL, Checksum: p.Checksum}
}
