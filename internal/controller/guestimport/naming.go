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

package guestimport

import (
	"strconv"
	"strings"
)

// maxNameLength keeps a resource name within a DNS label, so names derived
// from it (connection Secrets, events) stay valid.
const maxNameLength = 63

// resourceName is the name of the resource for a guest: its name made
// DNS-safe (lower case, runs of other characters as one hyphen), or
// vm-<vmid> when nothing is left.
func resourceName(guestName string, vmid int) string {
	var b strings.Builder
	hyphen := false
	for _, c := range strings.ToLower(guestName) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
			hyphen = false
		case !hyphen && b.Len() > 0:
			b.WriteByte('-')
			hyphen = true
		}
	}
	name := strings.TrimRight(b.String(), "-")
	if len(name) > maxNameLength {
		name = strings.TrimRight(name[:maxNameLength], "-")
	}
	if name == "" {
		return "vm-" + strconv.Itoa(vmid)
	}
	return name
}

// withVMID resolves a collision: the name with the VMID appended, cut so it
// still fits.
func withVMID(name string, vmid int) string {
	suffix := "-" + strconv.Itoa(vmid)
	if len(name)+len(suffix) > maxNameLength {
		name = strings.TrimRight(name[:maxNameLength-len(suffix)], "-")
	}
	return name + suffix
}
