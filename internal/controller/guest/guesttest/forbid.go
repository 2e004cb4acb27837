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

package guesttest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// NoUsage is a guest.UsageTracker that records nothing, for connector tests without a
// ProxmoxConnection object.
type NoUsage struct{}

// Track implements guest.UsageTracker.
func (NoUsage) Track(context.Context, resource.ModernManaged) error { return nil }

// DefaultConnection is a client cache holding cl as the default connection's client,
// which Connect hands out to a resource naming no connection.
func DefaultConnection(cl *pve.Client) *pve.Cache {
	c := pve.NewCache()
	c.Store(v1alpha1.DefaultConnectionName, "", cl)
	return c
}

// Forbid makes every request to sim fail as PVE's permission check does when the
// token lacks privilege on path: a 403 "Permission check failed (path, privilege)".
func Forbid(t *testing.T, sim *pvesim.Server, path, privilege string) {
	t.Helper()
	sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{ErrorRate: 1, Status: http.StatusForbidden,
		Message: fmt.Sprintf("Permission check failed (%s, %s)", path, privilege)}}})
	t.Cleanup(func() { sim.SetFaults(pvesim.Faults{}) })
}

// WantExplained fails unless err (what the managed reconciler writes into the
// ReconcileError condition) leads with the missing privilege and its path.
func WantExplained(t *testing.T, err error, path, privilege string) {
	t.Helper()
	want := fmt.Sprintf("missing Proxmox VE privilege %s on %s", privilege, path)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a 403 for %s on %s reached the condition as %v; want it to start with %q", privilege, path, err, want)
	}
}
