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

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// The guest layer's own refusals, for errors.Is. Each is wrapped with the
// guest, template or Secret it is about; its text is the part of the
// message that does not change.
var (
	// ErrTemplateNotFound: no template of the guest type has the name.
	ErrTemplateNotFound = errors.New("not found in Proxmox VE")
	// ErrForeignMarker: the guest at the resource's VMID carries another
	// resource's marker, or none where ours is required.
	ErrForeignMarker = errors.New("does not carry this resource's marker")
	// ErrWrongGuestType: the VMID holds a VM where a container is wanted,
	// or the reverse.
	ErrWrongGuestType = errors.New("holds the wrong guest type")
	// ErrPasswordSecretUnreadable: the Secret cloudInitConfig.passwordFrom
	// names cannot be read (it does not exist, or access is denied).
	ErrPasswordSecretUnreadable = errors.New("cannot read Secret")
	// ErrChangeRefused: the spec asks for a change the provider never makes
	// (shrinking a volume, moving it to another storage).
	ErrChangeRefused = errors.New("cannot apply the spec")
)

// Refused is the error of a plan's refused changes (pve's Plan.Refused), or
// nil when none was refused.
func Refused(reasons []string) error {
	if len(reasons) == 0 {
		return nil
	}
	return errors.Errorf("%w: %s", ErrChangeRefused, strings.Join(reasons, "; "))
}
