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

import (
	"testing"

	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// Every key the VirtualMachine's tables send is declared in the client's
// surface, the list the conformance suite's coverage test works from: a
// new row fails here, at once, rather than when a simulator test first
// sends it.
func TestFieldsAreDeclaredInTheSurface(t *testing.T) {
	fields := append(append(append(guest.Fields{}, SpecFields...), HardwareFields...), guest.CloudInitFields...)
	guesttest.FieldsDeclaredInSurface(t, []string{"POST /nodes/{node}/qemu", "PUT /nodes/{node}/qemu/{vmid}/config"},
		append(fields, guest.Field{Path: "network", Key: "net[n]"},
			guest.Field{Path: "cloudInitConfig.ipConfigs", Key: "ipconfig[n]"}, guest.Field{Path: "cloudInitConfig.custom", Key: "cicustom"}))
}
