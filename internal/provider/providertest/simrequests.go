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

package providertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// RequestIndex is the position in the simulator's request log (Options.Sim
// LogRequests) of the first request with this method and path, -1 when
// there is none: tests compare two to check an order.
func (h *Harness) RequestIndex(method, path string) int {
	for i, r := range h.Sim.RequestLog() {
		if r.Method == method && r.Path == path {
			return i
		}
	}
	return -1
}

// WaitRequest waits until the simulator has logged a request at or after
// since that match accepts: proof that the provider looked, for tests that
// then check what it did not do.
func (h *Harness) WaitRequest(t testing.TB, what string, since time.Time, timeout time.Duration, match func(pvesim.LoggedRequest) bool) {
	t.Helper()
	Eventually(t, timeout, 250*time.Millisecond, func() bool {
		for _, r := range h.Sim.RequestLog() {
			if !r.Time.Before(since) && match(r) {
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("no request %s after %s", what, timeout) })
}

// WaitHA waits until the simulator's HA resource of vmid has exactly want.
func (h *Harness) WaitHA(t testing.TB, vmid int, want map[string]string, timeout time.Duration) {
	t.Helper()
	var got map[string]string
	Eventually(t, timeout, 200*time.Millisecond, func() bool {
		got, _ = h.Sim.HAResource(vmid)
		return cmp.Equal(want, got)
	}, func() string { return "HA resource -want, +got:\n" + cmp.Diff(want, got) })
}
