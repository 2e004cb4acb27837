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

package admission

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// kubemoxStorageDownloadURL is kubemox's documented StorageDownloadURL
// sample (with a namespace, as kubectl adds).
const kubemoxStorageDownloadURL = `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: StorageDownloadURL
metadata:
  name: storagedownloadurl-sample
  namespace: default
spec:
  connectionRef:
    name: proxmox-connection-sample
  content: "iso"
  filename: "ubuntu-20.04-server-cloudimg-amd64.img"
  node: "lowtower"
  storage: "local"
  url: "https://cloud-images.ubuntu.com/releases/focal/release/ubuntu-20.04-server-cloudimg-amd64.img"
`

func sdu(spec string) string {
	return `
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: StorageDownloadURL
metadata:
  name: sdu-case
  namespace: default
spec:` + spec
}

const sduBase = `
  content: iso
  filename: debian-12.iso
  node: pve1
  url: https://cdimage.example/debian-12.iso`

func TestStorageDownloadURLAdmission(t *testing.T) {
	runAdmission(t, storageDownloadURLCases())
}

// storageDownloadURLCases are StorageDownloadURL manifests the API server
// accepts or refuses; the refused ones are also rows of the cross-kind
// bad-input table.
func storageDownloadURLCases() map[string]admissionCase {
	return map[string]admissionCase{
		"KubemoxSample": {manifest: kubemoxStorageDownloadURL},
		"AllFields": {manifest: sdu(sduBase + `
  storage: nfs-iso
  checksum: 0123456789abcdef
  checksumAlgorithm: sha256
  compression: zst
  verifyCertificate: false
  deletionProtection: true
  writeConnectionSecretToRef: {name: iso-conn}`)},
		"ImportContent": {manifest: sdu(`
  content: import
  filename: debian-12-genericcloud-amd64.qcow2
  node: pve1
  url: https://cloud.debian.org/images/cloud/bookworm/latest/debian-12-genericcloud-amd64.qcow2`)},
		"UnknownContent": {manifest: sdu(`
  content: images
  filename: a.raw
  node: pve1
  url: https://x.example/a.raw`), wantErr: []string{"spec.content", "Unsupported value"}},
		"CompressionOnlyForISO": {manifest: sdu(`
  content: vztmpl
  filename: debian-12.tar.zst
  node: pve1
  url: https://x.example/debian-12.tar.zst
  compression: zst`), wantErr: []string{"compression is valid only for content iso"}},
		"UnknownCompression": {manifest: sdu(sduBase + `
  compression: xz`), wantErr: []string{"spec.compression", "Unsupported value"}},
		"ChecksumWithoutAlgorithm": {manifest: sdu(sduBase + `
  checksum: 0123456789abcdef`), wantErr: []string{"checksum and checksumAlgorithm must be set together"}},
		"UnknownChecksumAlgorithm": {manifest: sdu(sduBase + `
  checksum: 0123456789abcdef
  checksumAlgorithm: crc32`), wantErr: []string{"spec.checksumAlgorithm", "Unsupported value"}},
		"FilenameWithAPath": {manifest: sdu(`
  content: iso
  filename: ../etc/passwd.iso
  node: pve1
  url: https://x.example/a.iso`), wantErr: []string{"filename may hold only letters, digits"}},
		"NotAnHTTPURL": {manifest: sdu(`
  content: iso
  filename: a.iso
  node: pve1
  url: ftp://x.example/a.iso`), wantErr: []string{"url must be an http:// or https:// URL"}},
		"MissingURL": {manifest: sdu(`
  content: iso
  filename: a.iso
  node: pve1`), wantErr: []string{"spec.url", "Required value"}},
	}
}

// TestStorageDownloadURLDefaultsAndImmutability checks storage's default,
// that an explicit verifyCertificate false is kept, and that the fields
// naming the volume cannot change while url can.
func TestStorageDownloadURLDefaultsAndImmutability(t *testing.T) {
	c := newClient(t)
	ctx := testContext(t)
	cr := &v1alpha1.StorageDownloadURL{}
	cr.SetName("sdu-immutable")
	cr.SetNamespace("default")
	cr.Spec.DownloadParameters = v1alpha1.DownloadParameters{
		Content: "iso", Filename: "a.iso", Node: "pve1", URL: "https://x.example/a.iso", VerifyCertificate: ptr.To(false),
	}
	if err := c.Create(ctx, cr); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, cr) })
	if cr.Spec.Storage != "local" || cr.Spec.VerifyCertificate == nil || *cr.Spec.VerifyCertificate {
		t.Fatalf("storage %q verifyCertificate %v: want the default local and an explicit false kept", cr.Spec.Storage, cr.Spec.VerifyCertificate)
	}
	cr.Spec.URL = "https://mirror.example/a.iso"
	if err := c.Update(ctx, cr); err != nil {
		t.Fatalf("a changed url must be accepted: %v", err)
	}
	cr.Spec.Filename = "b.iso"
	checkVerdict(t, c.Update(ctx, cr), []string{"node, storage, content and filename are immutable"})
}
