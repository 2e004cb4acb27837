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
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// A 403 from Proxmox VE reaches the CustomCertificate's condition naming the privilege
// and path PVE found missing.
func TestForbiddenNamesThePrivilege(t *testing.T) {
	e, sim := newExternal(t)
	cl, ok := e.cl.(*pve.Client)
	if !ok {
		t.Fatalf("newExternal's client is a %T, want the simulator's *pve.Client", e.cl)
	}
	conn := &connector{kube: guesttest.FakeKube(t), usage: guesttest.NoUsage{}, clients: guesttest.DefaultConnection(cl), record: event.NewNopRecorder()}
	crt, key := pair(t)
	cr := inlineCC(crt, key, false)
	ext, err := conn.Connect(context.Background(), cr)
	if err != nil {
		t.Fatal(err)
	}
	guesttest.Forbid(t, sim, "/nodes/pve", "Sys.Audit")
	_, err = ext.Observe(context.Background(), cr)
	guesttest.WantExplained(t, err, "/nodes/pve", "Sys.Audit")
}
