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

package customcertificate

import (
	"context"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// proxmox is everything the CustomCertificate controller asks of Proxmox VE
// (*pve.Client answers): a node's certificates, and uploading or removing
// its custom one. A test hands in a fake where the behaviour under test is
// the controller's; where it is Proxmox's, the tests use the simulator.
type proxmox interface {
	Certificates(ctx context.Context, node string) ([]pve.CertificateInfo, error)
	UploadCertificate(ctx context.Context, node, chainPEM, keyPEM string, force, restart bool) error
	DeleteCertificate(ctx context.Context, node string, restart bool) error
}

var _ proxmox = (*pve.Client)(nil)
